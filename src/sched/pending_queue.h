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
// A Rekey passes over the projects that have no room left under their
// quota (their jobs could start nothing): it leaves their keys as they were
// and walks skip those projects until KeyProjectsWithRoom keys them again,
// at the last Rekey's time, once they have room. So a tick on a cluster
// whose backlog waits on quotas costs O(projects), not O(groups).
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
  using HasRoom = std::function<bool(const std::string& project)>;

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

  // Gives every job its key as of `now` with these fair-share factors, but
  // for the filed jobs of projects that have no room (see above); with no
  // `has_room`, every project has room.
  void Rekey(core::TimePoint now, const Factor& project_factor, const Factor& user_factor,
             const HasRoom& has_room = nullptr);
  // Keys the projects the last Rekey passed over that have room now, as of
  // that Rekey's time with these factors, so that walks visit them again.
  void KeyProjectsWithRoom(const Factor& project_factor, const Factor& user_factor,
                           const HasRoom& has_room);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The first job's key that a walk would visit; nullopt when none.
  std::optional<OrderKey> Front() const;

  // Visits the jobs in queue order, but those of projects the last Rekey
  // passed over and not yet keyed again. The job just returned may leave the
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
    // Passes over every job not yet visited of the project of the job just
    // returned (it has no room left).
    void SkipRestOfProject();

   private:
    using Entry = std::pair<OrderKey, Slot>;
    using Heads = std::map<OrderKey, Slot>;
    // Where the walk stands in one project's group heads.
    struct Cursor {
      OrderKey key;
      Heads::const_iterator at;
      Heads::const_iterator end;
    };
    bool Entered(int group) const {
      return queue_->entered_in_walk_[static_cast<size_t>(group)] == stamp_;
    }
    bool Skipped(int group) const {
      const int project = queue_->groups_[static_cast<size_t>(group)].project;
      return queue_->skipped_in_walk_[static_cast<size_t>(project)] == stamp_;
    }
    const PendingQueue* queue_;
    uint64_t stamp_;
    // The next fresh job and, per project, the next group head to visit:
    // only the job just returned may leave, and it is behind them.
    Heads::const_iterator fresh_;
    std::vector<Cursor> cursors_;  // a heap, soonest first
    std::vector<Entry> heap_;      // the next job of each group the walk entered, soonest first
    std::optional<Slot> advance_;  // the filed job just returned: its group goes on after it
    int last_group_ = -1;          // the group of the job just returned
  };

 private:
  struct Group {
    std::set<Member> filed;
    int project = 0;  // accounts, as numbered by GroupOf
    int user = 0;
    double project_factor = 1;
    double user_factor = 1;
  };
  struct Project {
    std::map<OrderKey, Slot> heads;  // each non-empty group's first job, keyed as of keyed_at
    core::TimePoint keyed_at{};
    bool keyed = true;  // false: the last Rekey passed it over
  };
  using GroupKey = std::tuple<int, int, std::string, std::string, int>;

  OrderKey FiledKey(const Group& group, const Member& m) const;
  // The job after `m` in its group, with its key.
  std::optional<std::pair<OrderKey, Slot>> After(int group, const Member& m) const;
  // Gives each group head of `project`, and of `newly_filled` (its groups
  // that had no jobs), its key as of keyed_at_.
  using FactorOf = std::function<double(int account)>;
  void KeyProject(Project& project, const std::vector<int>& newly_filled,
                  const FactorOf& project_factor, const FactorOf& user_factor);

  const JobOrdering* ordering_;
  std::map<GroupKey, int> group_ids_;
  std::vector<Group> groups_;
  // Projects and users by number, so a Rekey asks each one's factor once.
  std::map<std::string, int> project_ids_, user_ids_;
  std::vector<const std::string*> project_names_, user_names_;
  std::vector<Project> projects_;   // by number, as project_names_
  std::vector<int> passed_over_;    // projects the last Rekey passed over, not keyed since
  std::map<OrderKey, Slot> fresh_;  // added since the last Rekey
  core::TimePoint keyed_at_{};
  size_t size_ = 0;
  // Per group, the last walk that entered it; per project, the last walk
  // that skipped the rest of it.
  mutable std::vector<uint64_t> entered_in_walk_;
  mutable std::vector<uint64_t> skipped_in_walk_;
  mutable uint64_t walks_ = 0;
};

}  // namespace gleaner::sched
