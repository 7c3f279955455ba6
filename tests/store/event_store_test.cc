// The history on every backend: each move of a job is recorded in the
// transaction that makes it, with who made it; other events are appended;
// pages read by job, user, kind and time; old events are pruned.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store_backend.h"

namespace gleaner::store {
namespace {

using ::testing::ElementsAre;

const core::TimePoint kNow = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

sched::JobSpec Spec() {
  sched::JobSpec s;
  s.command = {"sleep", "30"};
  s.project = "vision";
  return s;
}

std::vector<std::string> Kinds(const std::vector<EventRecord>& events) {
  std::vector<std::string> kinds;
  for (const EventRecord& e : events) kinds.push_back(e.kind);
  return kinds;
}

class EventStoreTest : public StoreTest {
 protected:
  std::vector<EventRecord> Of(sched::JobId job) {
    EventQuery q;
    q.job = job;
    auto events = store_->Events(q);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    return events.ok() ? *events : std::vector<EventRecord>{};
  }
};

TEST_P(EventStoreTest, EveryMoveOfAJobIsInItsHistoryInOrderWithWhoMadeIt) {
  auto job = store_->Submit("alice", 1000, Spec(), kNow);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  JobUpdate start;
  start.gpus = std::vector<core::GpuUuid>{core::GpuUuid("GPU-a")};
  start.started_at = kNow + core::Seconds(5);
  start.reason = "placed on idle GPU(s) of host a";
  ASSERT_TRUE(store_->Transition(job->id, JobState::kQueued, JobState::kRunning, start).ok());
  JobUpdate preempt;
  preempt.reason = "preempted by job 9 (critical)";
  ASSERT_TRUE(store_->Transition(job->id, JobState::kRunning, JobState::kVacating, preempt).ok());
  JobUpdate requeue;
  requeue.reason = "vacated: preempted by job 9 (critical)";
  ASSERT_TRUE(store_->Transition(job->id, JobState::kVacating, JobState::kQueued, requeue).ok());
  JobUpdate cancel;
  cancel.actor = "alice";
  cancel.reason = "cancelled by alice";
  ASSERT_TRUE(store_->Transition(job->id, JobState::kQueued, JobState::kCancelled, cancel).ok());

  const std::vector<EventRecord> events = Of(job->id);
  EXPECT_THAT(Kinds(events),
              ElementsAre("submitted", "started", "vacating", "requeued", "cancelled"));
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].at, kNow);
  EXPECT_EQ(events[0].actor, "alice");
  EXPECT_EQ(events[0].detail, "1 GPU(s), normal, project vision");
  EXPECT_EQ(events[1].at, kNow + core::Seconds(5));
  EXPECT_EQ(events[1].actor, "gleaner");
  EXPECT_THAT(events[1].gpus, ElementsAre(core::GpuUuid("GPU-a")));
  EXPECT_EQ(events[1].detail, "placed on idle GPU(s) of host a");
  EXPECT_EQ(events[2].detail, "preempted by job 9 (critical)");
  EXPECT_EQ(events[4].actor, "alice");
  for (const EventRecord& e : events) {
    EXPECT_EQ(e.job, job->id);
    EXPECT_EQ(e.user, "alice");
  }
}

TEST_P(EventStoreTest, AMoveThatFailsLeavesNoEvent) {
  auto job = store_->Submit("alice", 1000, Spec(), kNow);
  ASSERT_TRUE(job.ok());
  JobUpdate u;
  u.reason = "too late";
  EXPECT_FALSE(store_->Transition(job->id, JobState::kRunning, JobState::kSucceeded, u).ok());
  EXPECT_THAT(Kinds(Of(job->id)), ElementsAre("submitted"));
}

TEST_P(EventStoreTest, AJobThatNeedsApprovalWaitsAndItsDecisionIsRecorded) {
  auto saved = store_->SubmitAll(
      {{"alice", 1000, Spec(), "waiting for approval by carol: critical jobs need one"},
       {"bob", 1001, Spec(), "waiting for approval by carol: critical jobs need one"}},
      kNow);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  const JobRecord& a = saved->at(0);
  const JobRecord& b = saved->at(1);
  EXPECT_EQ(a.state, JobState::kPendingApproval);
  EXPECT_EQ(store_->Get(a.id)->state, JobState::kPendingApproval);
  EXPECT_EQ(store_->Get(a.id)->reason, "waiting for approval by carol: critical jobs need one");
  // It holds its user's place like any job that has not ended.
  EXPECT_EQ(store_->UsageOfUser(1000, 0)->jobs, 1);
  // Not on the queue the scheduler reads.
  EXPECT_TRUE(store_->List({JobState::kQueued})->empty());

  JobUpdate approve;
  approve.actor = "carol";
  approve.reason = "approved by carol";
  ASSERT_TRUE(
      store_->Transition(a.id, JobState::kPendingApproval, JobState::kQueued, approve).ok());
  // Twice: the second finds it decided.
  EXPECT_EQ(store_->Transition(a.id, JobState::kPendingApproval, JobState::kQueued, approve)
                .status()
                .code(),
            core::StatusCode::kFailedPrecondition);
  JobUpdate expire;
  expire.event = "expired";
  expire.reason = "no approver decided within 3d";
  ASSERT_TRUE(
      store_->Transition(b.id, JobState::kPendingApproval, JobState::kCancelled, expire).ok());

  EXPECT_THAT(Kinds(Of(a.id)), ElementsAre("submitted", "approved"));
  EXPECT_EQ(Of(a.id).back().actor, "carol");
  EXPECT_EQ(Of(a.id).front().detail,
            "1 GPU(s), normal, project vision; waiting for approval by carol: critical jobs "
            "need one");
  EXPECT_THAT(Kinds(Of(b.id)), ElementsAre("submitted", "expired"));
  EXPECT_EQ(Of(b.id).back().actor, "gleaner");
}

TEST_P(EventStoreTest, CancellingAnArrayRecordsEachTaskWithWhoDidIt) {
  sched::JobSpec spec = Spec();
  spec.array = sched::ArraySpec{};
  spec.array->first = 0;
  spec.array->last = 2;
  spec.array->step = 1;
  auto saved = store_->SubmitAll({{"alice", 1000, spec, ""}}, kNow);
  ASSERT_TRUE(saved.ok());
  ASSERT_TRUE(store_->CancelArray(saved->front().id, "cancelled by root", "root").ok());
  for (const JobRecord& task : *saved) {
    const std::vector<EventRecord> events = Of(task.id);
    EXPECT_THAT(Kinds(events), ElementsAre("submitted", "cancelled"));
    EXPECT_EQ(events.back().actor, "root");
    EXPECT_EQ(events.back().detail, "cancelled by root");
  }
}

TEST_P(EventStoreTest, AppendedEventsPageByUserKindAndTimeAndArePruned) {
  for (int i = 0; i < 6; ++i) {
    EventRecord e;
    e.at = kNow + core::Seconds(60 * i);
    e.kind = i % 2 == 0 ? "token_created" : "parked";
    e.user = i < 3 ? "alice" : "bob";
    e.actor = "root";
    e.gpus = {core::GpuUuid("GPU-" + std::to_string(i))};
    e.detail = "event " + std::to_string(i);
    auto saved = store_->AppendEvent(e);
    ASSERT_TRUE(saved.ok()) << saved.status().ToString();
    EXPECT_GT(saved->id, 0);
  }
  EventQuery by_user;
  by_user.user = "bob";
  EXPECT_EQ(store_->Events(by_user)->size(), 3u);
  EventQuery by_kind;
  by_kind.kind = "parked";
  by_kind.limit = 2;
  auto first = store_->Events(by_kind);
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ(first->at(0).detail, "event 1");
  by_kind.after = first->back().id;
  auto second = store_->Events(by_kind);
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ(second->at(0).detail, "event 5");
  EXPECT_THAT(second->at(0).gpus, ElementsAre(core::GpuUuid("GPU-5")));
  EventQuery recent;
  recent.since = kNow + core::Seconds(240);
  EXPECT_EQ(store_->Events(recent)->size(), 2u);

  EXPECT_EQ(*store_->PruneEvents(kNow + core::Seconds(120)), 2);
  EXPECT_EQ(store_->Events({})->size(), 4u);
  EXPECT_EQ(store_->Events({})->front().detail, "event 2");
}

TEST_P(EventStoreTest, PolicyVersionsAreNumberedInOrderAndEachIsInTheHistory) {
  EXPECT_EQ(store_->GetPolicy(0).status().code(), core::StatusCode::kNotFound);
  auto first =
      store_->AddPolicy({0, kNow, "gleaner.toml", "read at start", "[idle]\n"}, "policy_applied");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->version, 1);
  auto second = store_->AddPolicy(
      {0, kNow + core::Seconds(60), "root", "", "[rules.class.critical]\napproval = \"always\"\n"},
      "policy_applied");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->version, 2);
  auto back = store_->AddPolicy(
      {0, kNow + core::Seconds(120), "root", "rollback to version 1", first->text},
      "policy_rolled_back");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*store_->GetPolicy(0), *back);
  EXPECT_EQ(*store_->GetPolicy(2), *second);
  EXPECT_EQ(store_->GetPolicy(9).status().code(), core::StatusCode::kNotFound);
  auto listed = store_->ListPolicies(2);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ(listed->at(0).version, 3);
  EXPECT_EQ(listed->at(0).note, "rollback to version 1");
  EXPECT_TRUE(listed->at(0).text.empty());
  EXPECT_EQ(listed->at(1).version, 2);
  auto events = store_->Events({});
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ(events->at(0).detail, "version 1: read at start");
  EXPECT_EQ(events->at(1).detail, "version 2");
  EXPECT_EQ(events->at(2).kind, "policy_rolled_back");
  EXPECT_EQ(events->at(2).actor, "root");
  EXPECT_FALSE(events->at(2).job.has_value());
}

GLEANER_STORE_CONFORMANCE(EventStoreTest);

}  // namespace
}  // namespace gleaner::store
