#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/units.h"
#include "sched/job_request.h"
#include "sched/ordering.h"

namespace gleaner::sched {

// The waiting jobs in queue order, kept so that time passing costs
// O(groups), not O(jobs): a Rekey with a million jobs waiting from ten
// thousand users touches ten thousand groups.
//
// A group is the jobs of one class, numeric priority, project and user. An
// ordering gives them, at any one time, keys in submit order (the promise
// in ordering.h), so each group is a FIFO and the queue is the merge of the
// groups by the key of each one's first job. The order is the one a sorted
// set of every job's latest key would give: a filed job's key is the one
// the last Rekey gave it (that time, and each project's and user's
// fair-share factor then, cached per group); a job added since keeps the
// key it came with, beside the groups, until the next Rekey files it.
//
// Requests are held by pointer: each must stay put from Add until Remove.
// Thread-compatible.
class PendingQueue {
  struct Member {
    core::TimePoint submitted_at;
    JobId id = 0;
    const JobRequest* req = nullptr;
    friend bool operator<(const Member& a, const Member& b) {
      return std::tie(a.submitted_at, a.id) < std::tie(b.submitted_at, b.id);
    }
  };
  struct Slot {
    int group = 0;
    Member member;
  };

 public:
  using Factor = std::function<double(const std::string& account)>;

  explicit PendingQueue(const JobOrdering* ordering) : ordering_(ordering) {}

  // Which group `req` belongs to; stable for the queue's life. Jobs of one
  // group share the class, numeric priority, project and user, and `kind`:
  // a number the caller may use to keep apart jobs that fare differently
  // (Walk::SkipRestOfGroup).
  int GroupOf(const JobRequest& req, int kind = 0);

  // Adds a job of `group` with `key`, its key as of now.
  void Add(int group, const JobRequest& req, core::TimePoint submitted_at, const OrderKey& key);
  // Removes it; `key` is what KeyOf says or the key it was added with.
  void Remove(int group, const JobRequest& req, core::TimePoint submitted_at, const OrderKey& key);
  // The key a job has in the queue now; `added_with` is the key it was added with.
  OrderKey KeyOf(int group, const JobRequest& req, core::TimePoint submitted_at,
                 const OrderKey& added_with) const;

  // Gives every job its key as of `now` with these fair-share factors.
  void Rekey(core::TimePoint now, const Factor& project_factor, const Factor& user_factor);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The first job's key; nullopt when empty.
  std::optional<OrderKey> Front() const;

  // Visits the jobs in queue order. The job just returned may leave the
  // queue before the next call; no other job may enter or leave meanwhile,
  // and only one walk may be under way.
  class Walk {
   public:
    explicit Walk(const PendingQueue& queue);
    std::optional<OrderKey> Next();
    // Passes over the rest of the group of the job just returned; false if
    // there was nothing to pass over or the job is not yet filed (jobs
    // added since the last Rekey are visited one by one).
    bool SkipRestOfGroup() {
      const bool had = advance_.has_value();
      advance_.reset();
      return had;
    }

   private:
    using Entry = std::pair<OrderKey, Slot>;
    bool Entered(int group) const {
      return queue_->entered_in_walk_[static_cast<size_t>(group)] == stamp_;
    }
    const PendingQueue* queue_;
    uint64_t stamp_;
    // The next fresh job and the next group head to visit: only the job
    // just returned may leave, and it is behind them.
    std::map<OrderKey, Slot>::const_iterator fresh_;
    std::map<OrderKey, Slot>::const_iterator head_;
    std::vector<Entry> heap_;      // the next job of each group the walk entered, soonest first
    std::optional<Slot> advance_;  // the filed job just returned: its group goes on after it
  };

 private:
  struct Group {
    std::set<Member> filed;
    int project = 0;  // accounts, as numbered by AccountOf
    int user = 0;
    double project_factor = 1;
    double user_factor = 1;
  };
  using GroupKey = std::tuple<int, int, std::string, std::string, int>;

  OrderKey FiledKey(const Group& group, const Member& m) const;
  // The job after `m` in its group, with its key.
  std::optional<std::pair<OrderKey, Slot>> After(int group, const Member& m) const;

  const JobOrdering* ordering_;
  std::map<GroupKey, int> group_ids_;
  std::vector<Group> groups_;
  // Projects and users by number, so a Rekey asks each one's factor once.
  std::map<std::string, int> project_ids_, user_ids_;
  std::vector<const std::string*> project_names_, user_names_;
  std::map<OrderKey, Slot> heads_;  // each non-empty group's first job
  std::map<OrderKey, Slot> fresh_;  // added since the last Rekey
  core::TimePoint keyed_at_{};
  size_t size_ = 0;
  // Per group, the last walk that entered it.
  mutable std::vector<uint64_t> entered_in_walk_;
  mutable uint64_t walks_ = 0;
};

}  // namespace gleaner::sched
