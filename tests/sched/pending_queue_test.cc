// The queue must give exactly the order of one sorted set holding every
// job's latest key, however jobs come, go and get re-keyed; checked against
// that model on random histories.
#include "sched/pending_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <set>

#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

using testing::At;

struct Waiting {
  JobRequest req;
  core::TimePoint submitted_at;
  OrderKey key;  // its latest key: the model's
  OrderKey added_with;
  int group = 0;
  bool hidden = false;  // filed in a project the last Rekey passed over, not keyed since
};

class PendingQueueTest : public ::testing::Test {
 protected:
  PendingQueueTest() : queue_(&ordering_) {}

  void Add(JobId id, std::mt19937& rng) {
    JobRequest req = testing::MakeJob(id, 1);
    req.project = "p" + std::to_string(rng() % 3);
    req.user = "u" + std::to_string(rng() % 5);
    req.priority = static_cast<int>(rng() % 3) * 100;
    req.priority_class = static_cast<PriorityClass>(rng() % 3);
    // Requeued jobs come back with their old submit times.
    const core::TimePoint submitted = At(static_cast<int>(rng() % 5000));
    Waiting& w = jobs_[id];
    w.req = req;
    w.submitted_at = submitted;
    w.key = KeyAt(w, now_);
    w.added_with = w.key;
    w.group = queue_.GroupOf(w.req);
    queue_.Add(w.group, w.req, w.submitted_at, w.key);
  }
  void Remove(JobId id) {
    Waiting& w = jobs_.at(id);
    queue_.Remove(w.group, w.req, w.submitted_at,
                  queue_.KeyOf(w.group, w.req, w.submitted_at, w.added_with));
    jobs_.erase(id);
  }
  void Rekey(core::TimePoint now) {
    now_ = now;
    for (auto& [id, w] : jobs_) {
      w.hidden = full_.contains(w.req.project);
      if (!w.hidden) w.key = KeyAt(w, now);
    }
    queue_.Rekey(now, Factor(project_factor_), Factor(user_factor_), HasRoom());
  }
  // Projects with room again are keyed as of the last Rekey, with the
  // factors of now.
  void KeyProjectsWithRoom() {
    for (auto& [id, w] : jobs_) {
      if (w.hidden && !full_.contains(w.req.project)) {
        w.hidden = false;
        w.key = KeyAt(w, now_);
      }
    }
    queue_.KeyProjectsWithRoom(Factor(project_factor_), Factor(user_factor_), HasRoom());
  }
  PendingQueue::HasRoom HasRoom() const {
    return [this](const std::string& project) { return !full_.contains(project); };
  }
  OrderKey KeyAt(const Waiting& w, core::TimePoint at) const {
    OrderKey k = ordering_.Key({&w.req, w.submitted_at, at, project_factor_.at(w.req.project),
                                user_factor_.at(w.req.user)});
    k.id = w.req.id;
    return k;
  }
  static PendingQueue::Factor Factor(const std::map<std::string, double>& f) {
    return [&f](const std::string& account) { return f.at(account); };
  }
  std::vector<JobId> Expected() const {
    std::set<OrderKey> model;
    for (const auto& [id, w] : jobs_) {
      if (!w.hidden) model.insert(w.key);
    }
    std::vector<JobId> ids;
    for (const OrderKey& k : model) ids.push_back(k.id);
    return ids;
  }
  // Adds `adds` jobs, then removes each job, filed or fresh, one time in `one_in`.
  void Churn(std::mt19937& rng, JobId& next, int adds, unsigned one_in) {
    for (int i = 0; i < adds; ++i) Add(next++, rng);
    std::vector<JobId> ids;
    for (const auto& [id, w] : jobs_) ids.push_back(id);
    for (JobId id : ids) {
      if (rng() % one_in == 0) Remove(id);
    }
  }
  std::vector<JobId> Walked() const {
    std::vector<JobId> ids;
    PendingQueue::Walk walk(queue_);
    while (auto k = walk.Next()) ids.push_back(k->id);
    return ids;
  }

  MultifactorOrdering ordering_{MultifactorWeights{1000, 1000, 1000, core::Seconds(3600)}};
  PendingQueue queue_;
  std::map<JobId, Waiting> jobs_;
  std::set<std::string> full_;  // projects with no room under their quota
  std::map<std::string, double> project_factor_{{"p0", 1}, {"p1", 0.5}, {"p2", 0.25}};
  std::map<std::string, double> user_factor_{
      {"u0", 1}, {"u1", 0.9}, {"u2", 0.3}, {"u3", 0.7}, {"u4", 0.05}};
  core::TimePoint now_ = At(5000);
};

TEST_F(PendingQueueTest, WalksInTheOrderOfEveryJobsLatestKey) {
  std::mt19937 rng(7);
  JobId next = 1;
  for (int round = 0; round < 40; ++round) {
    Churn(rng, next, 30, 4);
    ASSERT_EQ(Walked(), Expected()) << "round " << round;
    ASSERT_EQ(queue_.size(), jobs_.size());
    if (!jobs_.empty()) {
      ASSERT_EQ(queue_.Front()->id, Expected().front());
    }
    // Time passes and usage changes; only some rounds re-key.
    project_factor_["p" + std::to_string(rng() % 3)] = static_cast<double>(rng() % 100) / 100.0;
    user_factor_["u" + std::to_string(rng() % 5)] = static_cast<double>(rng() % 100) / 100.0;
    if (round % 3 != 2) Rekey(now_ + core::Seconds(static_cast<int>(rng() % 900)));
  }
}

TEST_F(PendingQueueTest, ProjectsWithoutRoomArePassedOverUntilTheyHaveRoom) {
  std::mt19937 rng(5);
  JobId next = 1;
  for (int round = 0; round < 60; ++round) {
    Churn(rng, next, 20, 5);
    ASSERT_EQ(Walked(), Expected()) << "round " << round;
    ASSERT_EQ(queue_.size(), jobs_.size());
    const std::vector<JobId> expected = Expected();
    ASSERT_EQ(queue_.Front().has_value(), !expected.empty());
    if (!expected.empty()) {
      ASSERT_EQ(queue_.Front()->id, expected.front());
    }
    // Projects fill and empty; usage moves; some rounds re-key, others
    // only key the projects that have room again (as a pass does).
    const std::string p = "p" + std::to_string(rng() % 3);
    if (full_.contains(p)) {
      full_.erase(p);
    } else {
      full_.insert(p);
    }
    user_factor_["u" + std::to_string(rng() % 5)] = static_cast<double>(rng() % 100) / 100.0;
    if (round % 2 == 0) {
      Rekey(now_ + core::Seconds(static_cast<int>(rng() % 900)));
    } else {
      KeyProjectsWithRoom();
    }
  }
}

TEST_F(PendingQueueTest, AWalkSkipsTheRestOfAProjectWithoutRoom) {
  std::mt19937 rng(9);
  for (JobId id = 1; id <= 300; ++id) Add(id, rng);
  Rekey(now_ + core::Seconds(30));
  for (JobId id = 301; id <= 340; ++id) Add(id, rng);
  // The first job of p1 to come up finds its project full: none of p1's
  // jobs come up after it; the rest keep their order.
  std::vector<JobId> expected;
  bool p1_seen = false;
  for (JobId id : Expected()) {
    const bool p1 = jobs_.at(id).req.project == "p1";
    if (p1 && p1_seen) continue;
    p1_seen = p1_seen || p1;
    expected.push_back(id);
  }
  std::vector<JobId> walked;
  PendingQueue::Walk walk(queue_);
  while (auto k = walk.Next()) {
    walked.push_back(k->id);
    if (jobs_.at(k->id).req.project == "p1") walk.SkipRestOfProject();
  }
  EXPECT_EQ(walked, expected);
}

TEST_F(PendingQueueTest, TheJobJustVisitedMayLeaveMidWalk) {
  std::mt19937 rng(11);
  for (JobId id = 1; id <= 200; ++id) Add(id, rng);
  Rekey(now_ + core::Seconds(60));
  for (JobId id = 201; id <= 260; ++id) Add(id, rng);
  const std::vector<JobId> expected = Expected();
  // Every third job visited starts (leaves the queue) while the walk goes on.
  std::vector<JobId> walked;
  PendingQueue::Walk walk(queue_);
  while (auto k = walk.Next()) {
    walked.push_back(k->id);
    if (walked.size() % 3 == 0) Remove(k->id);
  }
  EXPECT_EQ(walked, expected);
  EXPECT_EQ(queue_.size(), 260u - 260u / 3);
  EXPECT_EQ(Walked(), Expected());
}

TEST_F(PendingQueueTest, KeyOfIsTheKeyTheWalkGives) {
  std::mt19937 rng(3);
  for (JobId id = 1; id <= 50; ++id) Add(id, rng);
  Rekey(now_ + core::Seconds(120));
  for (JobId id = 51; id <= 60; ++id) Add(id, rng);
  PendingQueue::Walk walk(queue_);
  while (auto k = walk.Next()) {
    const Waiting& w = jobs_.at(k->id);
    const OrderKey of = queue_.KeyOf(w.group, w.req, w.submitted_at, w.added_with);
    EXPECT_FALSE(of < *k || *k < of) << "job " << k->id;
  }
}

TEST_F(PendingQueueTest, EmptyQueueHasNoFront) {
  EXPECT_TRUE(queue_.empty());
  EXPECT_FALSE(queue_.Front().has_value());
  EXPECT_FALSE(PendingQueue::Walk(queue_).Next().has_value());
  std::mt19937 rng(1);
  Add(1, rng);
  Rekey(now_);
  Remove(1);
  EXPECT_TRUE(queue_.empty());
  EXPECT_FALSE(queue_.Front().has_value());
}

}  // namespace
}  // namespace gleaner::sched
