// The store's chores: a job that waits for an approver past the timeout is
// cancelled as expired (an approver's decision first stands), and events
// past the retention are dropped; at most once a minute.
#include "cluster/housekeeping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/sqlite_store.h"

namespace gleaner::cluster {
namespace {

using store::JobState;
using ::testing::HasSubstr;

const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

TEST(HousekeepingTest, ExpiresApprovalsPastTheTimeoutAndPrunesOldEvents) {
  auto store = store::SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  sched::JobSpec spec;
  spec.command = {"true"};
  const auto waiting = [&](core::TimePoint at) {
    return (*store)
        ->SubmitAll({{"alice", 1000, spec, "waiting for approval by root"}}, at)
        ->front()
        .id;
  };
  const sched::JobId old = waiting(kT0);
  const sched::JobId decided = waiting(kT0);
  const sched::JobId fresh = waiting(kT0 + core::Seconds(3000));
  store::JobUpdate yes;
  yes.actor = "root";
  yes.reason = "approved by root";
  ASSERT_TRUE(
      (*store)->Transition(decided, JobState::kPendingApproval, JobState::kQueued, yes).ok());

  Housekeeping chores(core::Seconds(3600), core::Seconds(86400));
  std::vector<std::string> log;
  const Log record = [&](const std::string& line) { log.push_back(line); };
  chores.Tick(**store, kT0 + core::Seconds(6590), record);
  EXPECT_EQ((*store)->Get(old)->state, JobState::kCancelled);
  EXPECT_THAT((*store)->Get(old)->reason,
              HasSubstr("no approver decided within 1h00m ([rules] approval_timeout_s)"));
  EXPECT_EQ((*store)->Get(decided)->state, JobState::kQueued);
  EXPECT_EQ((*store)->Get(fresh)->state, JobState::kPendingApproval);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_THAT(log[0], HasSubstr("job 1 expired"));
  store::EventQuery q;
  q.job = old;
  EXPECT_EQ((*store)->Events(q)->back().kind, "expired");

  // Within the minute: nothing is looked at again.
  chores.Tick(**store, kT0 + core::Seconds(6620), record);
  EXPECT_EQ((*store)->Get(fresh)->state, JobState::kPendingApproval);
  chores.Tick(**store, kT0 + core::Seconds(6660), record);
  EXPECT_EQ((*store)->Get(fresh)->state, JobState::kCancelled);

  // Past the retention, the older events are gone.
  chores.Tick(**store, kT0 + core::Seconds(86400 + 6600), record);
  auto left = (*store)->Events({});
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ(left->front().kind, "expired");
  EXPECT_EQ(left->front().job, fresh);
}

}  // namespace
}  // namespace gleaner::cluster
