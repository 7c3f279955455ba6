// The durable job queue: transitions are compare-and-set, and an
// acknowledged submit survives kill -9 of the writer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::store {
namespace {

using ::testing::HasSubstr;

const core::TimePoint kNow = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

sched::JobSpec Spec(int gpus = 1) {
  sched::JobSpec s;
  s.command = {"sleep", "30"};
  s.gpus = gpus;
  return s;
}

TEST(JobStoreTest, SubmitGetAndList) {
  auto store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  auto a = (*store)->Submit("alice", 1000, Spec(2), kNow);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->id, 1);
  EXPECT_EQ(a->state, JobState::kQueued);
  EXPECT_EQ(a->user, "alice");
  EXPECT_EQ(a->uid, 1000u);
  EXPECT_EQ(a->spec, Spec(2));
  EXPECT_EQ(a->submitted_at, kNow);
  auto b = (*store)->Submit("bob", 1001, Spec(), kNow + core::Seconds(1));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->id, 2);
  EXPECT_EQ(*(*store)->Get(1), *a);
  EXPECT_EQ((*store)->Get(99).status().code(), core::StatusCode::kNotFound);
  EXPECT_EQ((*store)->List({})->size(), 2u);
  EXPECT_EQ((*store)->List({JobState::kRunning})->size(), 0u);
}

TEST(JobStoreTest, TransitionsAreCompareAndSet) {
  auto store = SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  const sched::JobId id = (*store)->Submit("alice", 1000, Spec(), kNow)->id;
  JobUpdate start;
  start.gpus = std::vector<core::GpuUuid>{core::GpuUuid("GPU-a"), core::GpuUuid("GPU-b")};
  start.started_at = kNow + core::Seconds(5);
  start.reason = "GPU-a idle for 12m";
  auto running = (*store)->Transition(id, JobState::kQueued, JobState::kRunning, start);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_EQ(running->state, JobState::kRunning);
  EXPECT_EQ(running->attempts, 1);
  EXPECT_EQ(running->gpus.size(), 2u);
  EXPECT_EQ(running->reason, "GPU-a idle for 12m");

  // A second actor that also saw it queued loses the race.
  auto again = (*store)->Transition(id, JobState::kQueued, JobState::kRunning, start);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), HasSubstr("is running, not queued"));

  ASSERT_TRUE((*store)->Transition(id, JobState::kRunning, JobState::kVacating, {}).ok());
  JobUpdate requeue;
  requeue.reason = "owner process 4242 appeared on GPU-a";
  auto queued = (*store)->Transition(id, JobState::kVacating, JobState::kQueued, requeue);
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->attempts, 1);
  ASSERT_TRUE((*store)->Transition(id, JobState::kQueued, JobState::kRunning, start).ok());
  JobUpdate done;
  done.exit_code = 0;
  done.finished_at = kNow + core::Seconds(60);
  auto finished = (*store)->Transition(id, JobState::kRunning, JobState::kSucceeded, done);
  ASSERT_TRUE(finished.ok());
  EXPECT_EQ(finished->attempts, 2);
  EXPECT_EQ(finished->exit_code, 0);
  EXPECT_TRUE(IsFinal(finished->state));

  auto resurrect = (*store)->Transition(id, JobState::kSucceeded, JobState::kQueued, {});
  EXPECT_THAT(resurrect.status().message(), HasSubstr("cannot go from succeeded to queued"));
  EXPECT_EQ((*store)->Transition(77, JobState::kQueued, JobState::kRunning, {}).status().code(),
            core::StatusCode::kNotFound);
}

TEST(JobStoreTest, StateNamesRoundTrip) {
  for (JobState s : {JobState::kQueued, JobState::kHeld, JobState::kRunning, JobState::kVacating,
                     JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    EXPECT_EQ(ParseJobState(JobStateName(s)), s);
  }
  EXPECT_FALSE(ParseJobState("paused").has_value());
}

// Four writer processes submit as fast as they can, each reporting an id
// only after Submit returned; all are killed with SIGKILL mid-stream. Every
// acknowledged job must be in the file, exactly once.
TEST(JobStoreCrashTest, AcknowledgedSubmitsSurviveKill9) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "gleaner.db").string();
  { ASSERT_TRUE(SqliteStore::Open(path).ok()); }  // create the schema once
  int acks[2];
  ASSERT_EQ(pipe(acks), 0);
  std::vector<pid_t> writers;
  for (int w = 0; w < 4; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(acks[0]);
      auto store = SqliteStore::Open(path);
      if (!store.ok()) _exit(2);
      for (int i = 0; i < 100000; ++i) {
        auto job = (*store)->Submit("w" + std::to_string(w), 1000, Spec(), kNow);
        if (!job.ok()) _exit(3);
        const int64_t id = job->id;
        if (write(acks[1], &id, sizeof id) != sizeof id) _exit(4);
      }
      _exit(0);
    }
    writers.push_back(pid);
  }
  close(acks[1]);
  std::set<int64_t> acknowledged;
  int64_t id = 0;
  while (acknowledged.size() < 300 && read(acks[0], &id, sizeof id) == sizeof id) {
    acknowledged.insert(id);
  }
  for (pid_t pid : writers) kill(pid, SIGKILL);
  while (read(acks[0], &id, sizeof id) == sizeof id) acknowledged.insert(id);  // acks in flight
  close(acks[0]);
  for (pid_t pid : writers) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status)) << "a writer stopped on its own: " << status;
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto jobs = (*store)->List({});
  ASSERT_TRUE(jobs.ok());
  std::set<int64_t> stored;
  for (const JobRecord& j : *jobs) {
    EXPECT_TRUE(stored.insert(j.id).second) << "job " << j.id << " twice";
  }
  EXPECT_GE(acknowledged.size(), 300u);
  for (int64_t acked : acknowledged) EXPECT_TRUE(stored.contains(acked)) << "lost job " << acked;
}

}  // namespace
}  // namespace gleaner::store

namespace gleaner::store {
namespace {

TEST(JobStoreTest, RecordsTheProcessOfARunningJob) {
  auto store = SqliteStore::Open(":memory:");
  const sched::JobId id = (*store)->Submit("alice", 1000, Spec(), kNow)->id;
  EXPECT_EQ((*store)->RecordProcess(id, 4242, kNow).code(), core::StatusCode::kFailedPrecondition);
  ASSERT_TRUE((*store)->Transition(id, JobState::kQueued, JobState::kRunning, {}).ok());
  ASSERT_TRUE((*store)->RecordProcess(id, 4242, kNow + core::Seconds(1)).ok());
  auto job = (*store)->Get(id);
  EXPECT_EQ(job->pid, 4242);
  EXPECT_EQ(job->process_started_at, kNow + core::Seconds(1));
}

}  // namespace
}  // namespace gleaner::store
