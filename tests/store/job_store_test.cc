// The durable job queue on every backend: transitions are compare-and-set,
// submits are all-or-nothing, and an acknowledged submit survives kill -9
// of the writer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "store/job_json.h"
#include "store_backend.h"

namespace gleaner::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const core::TimePoint kNow = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

sched::JobSpec Spec(int gpus = 1) {
  sched::JobSpec s;
  s.command = {"sleep", "30"};
  s.gpus = gpus;
  return s;
}

sched::JobSpec ArraySpec(int64_t first, int64_t last, int64_t step) {
  sched::JobSpec s = Spec();
  s.array = sched::ArraySpec{};
  s.array->first = first;
  s.array->last = last;
  s.array->step = step;
  return s;
}

// A start on `gpus`.
JobUpdate StartOn(const std::vector<std::string>& gpus) {
  JobUpdate u;
  u.gpus.emplace();
  for (const std::string& g : gpus) u.gpus->emplace_back(g);
  u.started_at = kNow;
  u.reason = "placed on idle GPU(s)";
  return u;
}

class JobStoreTest : public StoreTest {
 protected:
  core::Result<JobRecord> Start(sched::JobId id, const std::vector<std::string>& gpus) {
    return store_->Transition(id, JobState::kQueued, JobState::kRunning, StartOn(gpus));
  }
};

TEST_P(JobStoreTest, SubmitGetAndList) {
  auto a = store_->Submit("alice", 1000, Spec(2), kNow);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->id, 1);
  EXPECT_EQ(a->state, JobState::kQueued);
  EXPECT_EQ(a->user, "alice");
  EXPECT_EQ(a->uid, 1000u);
  EXPECT_EQ(a->spec, Spec(2));
  EXPECT_EQ(a->submitted_at, kNow);
  auto b = store_->Submit("bob", 1001, Spec(), kNow + core::Seconds(1));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->id, 2);
  EXPECT_EQ(*store_->Get(1), *a);
  EXPECT_EQ(store_->Get(99).status().code(), core::StatusCode::kNotFound);
  EXPECT_EQ(store_->List({})->size(), 2u);
  EXPECT_EQ(store_->List({JobState::kRunning})->size(), 0u);
  ASSERT_TRUE(store_->Transition(2, JobState::kQueued, JobState::kHeld, {}).ok());
  auto queued_or_held = store_->List({JobState::kHeld, JobState::kQueued});
  ASSERT_TRUE(queued_or_held.ok()) << queued_or_held.status().ToString();
  ASSERT_EQ(queued_or_held->size(), 2u);
  EXPECT_EQ((*queued_or_held)[0].id, 1);  // oldest first
  EXPECT_EQ((*queued_or_held)[1].state, JobState::kHeld);
}

TEST_P(JobStoreTest, FindPagesThroughJobsByStateAndUser) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store_
                    ->Submit(i % 2 == 0 ? "alice" : "bob", static_cast<uint32_t>(1000 + i % 2),
                             Spec(), kNow)
                    .ok());
  }
  ASSERT_TRUE(store_->Transition(3, JobState::kQueued, JobState::kHeld, {}).ok());
  const auto ids = [](const core::Result<std::vector<JobRecord>>& jobs) {
    std::vector<sched::JobId> out;
    for (const JobRecord& r : *jobs) out.push_back(r.id);
    return out;
  };
  JobQuery page;
  page.limit = 2;
  EXPECT_THAT(ids(store_->Find(page)), ElementsAre(1, 2));
  page.after = 2;
  EXPECT_THAT(ids(store_->Find(page)), ElementsAre(3, 4));
  page.after = 4;
  EXPECT_THAT(ids(store_->Find(page)), ElementsAre(5));
  JobQuery alice;
  alice.user = "alice";
  EXPECT_THAT(ids(store_->Find(alice)), ElementsAre(1, 3, 5));
  alice.states = {JobState::kQueued};
  EXPECT_THAT(ids(store_->Find(alice)), ElementsAre(1, 5));
  alice.after = 1;
  EXPECT_THAT(ids(store_->Find(alice)), ElementsAre(5));
  JobQuery nobody;
  nobody.user = "carol' OR '1'='1";
  EXPECT_THAT(ids(store_->Find(nobody)), ElementsAre());
}

TEST_P(JobStoreTest, CountsByStateAndAddsUpWhatEachUserAndProjectHold) {
  sched::JobSpec vision = Spec();
  vision.project = "vision";
  ASSERT_TRUE(store_->Submit("alice", 1000, vision, kNow).ok());
  ASSERT_TRUE(store_->Submit("alice", 1000, ArraySpec(0, 2, 1), kNow).ok());  // 3 tasks
  ASSERT_TRUE(store_->Submit("bob", 1001, vision, kNow).ok());
  ASSERT_TRUE(Start(1, {"GPU-a"}).ok());
  ASSERT_TRUE(store_->Transition(5, JobState::kQueued, JobState::kCancelled, {}).ok());

  auto counts = store_->CountByState();
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(*counts,
            (std::map<JobState, int64_t>{
                {JobState::kQueued, 3}, {JobState::kRunning, 1}, {JobState::kCancelled, 1}}));

  const int64_t spec_bytes = static_cast<int64_t>(StoredSpecText(vision).size());
  const int64_t task_bytes = static_cast<int64_t>(StoredSpecText(ArraySpec(0, 2, 1)).size());
  auto alice = store_->UsageOfUser(1000, 0);
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();
  EXPECT_EQ(alice->jobs, 4);  // the running job counts; nothing has ended
  EXPECT_EQ(alice->spec_bytes, spec_bytes + 3 * task_bytes);
  auto bob = store_->UsageOfUser(1001, 0);
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->jobs, 0);  // his only job was cancelled
  EXPECT_EQ(bob->spec_bytes, 0);
  auto project = store_->UsageOfProject("vision", 0);
  ASSERT_TRUE(project.ok()) << project.status().ToString();
  EXPECT_EQ(project->jobs, 1);
  EXPECT_EQ(project->spec_bytes, spec_bytes);
  EXPECT_EQ(store_->UsageOfProject("nlp", 0)->jobs, 0);
  // A check against a limit reads no more than it needs.
  auto capped = store_->UsageOfUser(1000, 2);
  ASSERT_TRUE(capped.ok()) << capped.status().ToString();
  EXPECT_EQ(capped->jobs, 2);
}

TEST_P(JobStoreTest, StatesOfManyJobsInOneRead) {
  const sched::JobId a = store_->Submit("alice", 1000, Spec(), kNow)->id;
  const sched::JobId b = store_->Submit("bob", 1001, Spec(), kNow)->id;
  ASSERT_TRUE(store_->Transition(b, JobState::kQueued, JobState::kCancelled, {}).ok());
  auto states = store_->StatesOf({a, b, b + 100});
  ASSERT_TRUE(states.ok()) << states.status().ToString();
  EXPECT_EQ(*states,
            (std::map<sched::JobId, JobState>{{a, JobState::kQueued}, {b, JobState::kCancelled}}));
  EXPECT_TRUE(store_->StatesOf({})->empty());
}

// Slurm's meaning: a dependency on an array's id is on every task of it.
TEST_P(JobStoreTest, AnArraysIdStandsForTheWholeArray) {
  sched::JobSpec sweep = Spec();
  sweep.array = sched::ArraySpec{0, 2, 1, 0};
  const sched::JobId first = store_->Submit("alice", 1000, sweep, kNow)->id;
  const sched::JobId other = store_->Submit("bob", 1001, Spec(), kNow)->id;
  const auto state_of = [&](sched::JobId id) { return store_->StatesOf({id, other})->at(id); };
  const auto end = [&](sched::JobId id, JobState how) {
    ASSERT_TRUE(Start(id, {"GPU-a"}).ok());
    ASSERT_TRUE(store_->Transition(id, JobState::kRunning, how, {}).ok());
  };
  end(first, JobState::kSucceeded);
  end(first + 2, JobState::kSucceeded);
  EXPECT_EQ(state_of(first), JobState::kQueued);  // task 1 has not ended
  end(first + 1, JobState::kSucceeded);
  EXPECT_EQ(state_of(first), JobState::kSucceeded);
  EXPECT_EQ(store_->StatesOf({other})->at(other), JobState::kQueued);

  const sched::JobId second = store_->Submit("alice", 1000, sweep, kNow)->id;
  end(second, JobState::kFailed);
  ASSERT_TRUE(store_->Transition(second + 1, JobState::kQueued, JobState::kCancelled, {}).ok());
  end(second + 2, JobState::kSucceeded);
  EXPECT_EQ(state_of(second), JobState::kFailed);
  // A task named by its own id is that task alone.
  EXPECT_EQ(state_of(second + 2), JobState::kSucceeded);
}

TEST_P(JobStoreTest, TransitionsAreCompareAndSet) {
  const sched::JobId id = store_->Submit("alice", 1000, Spec(), kNow)->id;
  JobUpdate start;
  start.gpus = std::vector<core::GpuUuid>{core::GpuUuid("GPU-a"), core::GpuUuid("GPU-b")};
  start.started_at = kNow + core::Seconds(5);
  start.reason = "GPU-a idle for 12m";
  auto running = store_->Transition(id, JobState::kQueued, JobState::kRunning, start);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_EQ(running->state, JobState::kRunning);
  EXPECT_EQ(running->attempts, 1);
  EXPECT_EQ(running->gpus.size(), 2u);
  EXPECT_EQ(running->reason, "GPU-a idle for 12m");
  EXPECT_EQ(*store_->Get(id), *running);

  // A second actor that also saw it queued loses the race.
  auto again = store_->Transition(id, JobState::kQueued, JobState::kRunning, start);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(), HasSubstr("is running, not queued"));

  ASSERT_TRUE(store_->Transition(id, JobState::kRunning, JobState::kVacating, {}).ok());
  JobUpdate requeue;
  requeue.reason = "owner process 4242 appeared on GPU-a";
  auto queued = store_->Transition(id, JobState::kVacating, JobState::kQueued, requeue);
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued->attempts, 1);
  EXPECT_EQ(queued->gpus.size(), 2u);  // unset fields keep their value
  EXPECT_EQ(queued->started_at, kNow + core::Seconds(5));
  ASSERT_TRUE(store_->Transition(id, JobState::kQueued, JobState::kRunning, start).ok());
  JobUpdate done;
  done.exit_code = 0;
  done.finished_at = kNow + core::Seconds(60);
  auto finished = store_->Transition(id, JobState::kRunning, JobState::kSucceeded, done);
  ASSERT_TRUE(finished.ok());
  EXPECT_EQ(finished->attempts, 2);
  EXPECT_EQ(finished->exit_code, 0);
  EXPECT_EQ(finished->finished_at, kNow + core::Seconds(60));
  EXPECT_TRUE(IsFinal(finished->state));

  auto resurrect = store_->Transition(id, JobState::kSucceeded, JobState::kQueued, {});
  EXPECT_THAT(resurrect.status().message(), HasSubstr("cannot go from succeeded to queued"));
  EXPECT_EQ(store_->Transition(77, JobState::kQueued, JobState::kRunning, {}).status().code(),
            core::StatusCode::kNotFound);
}

TEST_P(JobStoreTest, RecordsTheProcessOfARunningJob) {
  const sched::JobId id = store_->Submit("alice", 1000, Spec(), kNow)->id;
  EXPECT_EQ(store_->RecordProcess(id, 4242, kNow).code(), core::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store_->Transition(id, JobState::kQueued, JobState::kRunning, {}).ok());
  ASSERT_TRUE(store_->RecordProcess(id, 4242, kNow + core::Seconds(1)).ok());
  auto job = store_->Get(id);
  EXPECT_EQ(job->pid, 4242);
  EXPECT_EQ(job->process_started_at, kNow + core::Seconds(1));
  EXPECT_EQ(store_->RecordProcess(99, 1, kNow).code(), core::StatusCode::kFailedPrecondition);
  // Vacating keeps the process; a requeue does not: the next attempt's
  // pid is its own, never the last one's.
  auto vacating = store_->Transition(id, JobState::kRunning, JobState::kVacating, {});
  ASSERT_TRUE(vacating.ok()) << vacating.status().ToString();
  EXPECT_EQ(vacating->pid, 4242);
  auto requeued = store_->Transition(id, JobState::kVacating, JobState::kQueued, {});
  ASSERT_TRUE(requeued.ok()) << requeued.status().ToString();
  EXPECT_EQ(requeued->pid, std::nullopt);
  EXPECT_EQ(requeued->process_started_at, std::nullopt);
  JobUpdate started;
  started.pid = 5151;
  auto again = store_->Transition(id, JobState::kQueued, JobState::kRunning, started);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->pid, 5151);
}

// One call queues plain jobs and arrays, in order; an array becomes one
// task per index, named by its first task's id.
TEST_P(JobStoreTest, SubmitAllExpandsArraysInOrder) {
  auto saved = store_->SubmitAll({{"alice", 1000, Spec(), ""},
                                  {"bob", 1001, ArraySpec(10, 14, 2), ""},
                                  {"carol", 1002, Spec(2), ""}},
                                 kNow);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  ASSERT_EQ(saved->size(), 5u);
  const JobRecord& first_task = (*saved)[1];
  EXPECT_EQ(first_task.array_id, first_task.id);
  std::vector<int64_t> indices;
  for (size_t i = 1; i <= 3; ++i) {
    EXPECT_EQ((*saved)[i].array_id, first_task.id);
    EXPECT_EQ((*saved)[i].user, "bob");
    indices.push_back((*saved)[i].array_index);
  }
  EXPECT_THAT(indices, ElementsAre(10, 12, 14));
  EXPECT_FALSE((*saved)[0].array_id.has_value());
  EXPECT_FALSE((*saved)[4].array_id.has_value());
  // What the call returned is what was stored.
  auto listed = store_->List({});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(*listed, *saved);
}

TEST_P(JobStoreTest, AnnotateTouchesOnlyJobsStillInTheState) {
  const sched::JobId waiting = store_->Submit("alice", 1000, Spec(), kNow)->id;
  const sched::JobId started = store_->Submit("bob", 1001, Spec(), kNow)->id;
  JobUpdate start;
  start.reason = "started on GPU-a";
  ASSERT_TRUE(store_->Transition(started, JobState::kQueued, JobState::kRunning, start).ok());
  ASSERT_TRUE(store_
                  ->Annotate({{waiting, "waiting for 2 idle GPUs"}, {started, "stale reason"}},
                             JobState::kQueued)
                  .ok());
  EXPECT_EQ(store_->Get(waiting)->reason, "waiting for 2 idle GPUs");
  EXPECT_EQ(store_->Get(started)->reason, "started on GPU-a");
  EXPECT_TRUE(store_->Annotate({}, JobState::kQueued).ok());
}

TEST_P(JobStoreTest, CancelArrayCancelsOnlyLiveTasks) {
  auto tasks = store_->Submit("alice", 1000, ArraySpec(0, 3, 1), kNow);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  const sched::JobId array = tasks->id;
  const sched::JobId other = store_->Submit("bob", 1001, Spec(), kNow)->id;
  // Task 0 ended already; task 1 is running.
  ASSERT_TRUE(store_->Transition(array, JobState::kQueued, JobState::kRunning, {}).ok());
  ASSERT_TRUE(store_->Transition(array, JobState::kRunning, JobState::kSucceeded, {}).ok());
  ASSERT_TRUE(store_->Transition(array + 1, JobState::kQueued, JobState::kRunning, {}).ok());
  auto cancelled = store_->CancelArray(array, "cancelled by alice", "alice");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_THAT(*cancelled, ElementsAre(array + 1, array + 2, array + 3));
  EXPECT_EQ(store_->Get(array)->state, JobState::kSucceeded);
  for (sched::JobId id : *cancelled) {
    EXPECT_EQ(store_->Get(id)->state, JobState::kCancelled);
    EXPECT_EQ(store_->Get(id)->reason, "cancelled by alice");
  }
  EXPECT_EQ(store_->Get(other)->state, JobState::kQueued);
  EXPECT_TRUE(store_->CancelArray(array, "again", "alice")->empty());
}

// The database, not only the scheduler, keeps each GPU to one job: a start
// on a GPU another job holds fails whole, and the job stays queued.
TEST_P(JobStoreTest, AGpuIsNeverAssignedToTwoJobs) {
  const sched::JobId first = store_->Submit("alice", 1000, Spec(2), kNow)->id;
  const sched::JobId second = store_->Submit("bob", 1001, Spec(2), kNow)->id;
  const sched::JobId third = store_->Submit("carol", 1002, Spec(), kNow)->id;
  ASSERT_TRUE(Start(first, {"GPU-a", "GPU-b"}).ok());
  auto refused = Start(second, {"GPU-c", "GPU-b"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("GPU GPU-b is already assigned to job " + std::to_string(first)));
  auto waiting = store_->Get(second);
  ASSERT_TRUE(waiting.ok()) << waiting.status().ToString();
  EXPECT_EQ(waiting->state, JobState::kQueued);
  EXPECT_EQ(waiting->attempts, 0);
  EXPECT_TRUE(waiting->gpus.empty());
  EXPECT_FALSE(waiting->started_at.has_value());
  // Nothing of the refused start stayed: the GPU it did get is free.
  auto other = Start(third, {"GPU-c"});
  EXPECT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(store_->Get(first)->state, JobState::kRunning);
}

// A vacating job's processes are still on its GPUs: it keeps them until it
// has left.
TEST_P(JobStoreTest, AVacatingJobKeepsItsGpus) {
  const sched::JobId holder = store_->Submit("alice", 1000, Spec(), kNow)->id;
  const sched::JobId waiter = store_->Submit("bob", 1001, Spec(), kNow)->id;
  ASSERT_TRUE(Start(holder, {"GPU-a"}).ok());
  ASSERT_TRUE(store_->Transition(holder, JobState::kRunning, JobState::kVacating, {}).ok());
  EXPECT_THAT(Start(waiter, {"GPU-a"}).status().message(),
              HasSubstr("GPU GPU-a is already assigned to job " + std::to_string(holder)));
  ASSERT_TRUE(store_->Transition(holder, JobState::kVacating, JobState::kQueued, {}).ok());
  auto started = Start(waiter, {"GPU-a"});
  EXPECT_TRUE(started.ok()) << started.status().ToString();
}

// However a job leaves its GPUs (it ends, is requeued, is cancelled, after
// vacating or not), another job can start on them; until then none can.
TEST_P(JobStoreTest, EveryWayOfLeavingGivesTheGpusBack) {
  using S = JobState;
  const std::vector<std::vector<JobState>> ways = {{S::kSucceeded},
                                                   {S::kFailed},
                                                   {S::kCancelled},
                                                   {S::kQueued},
                                                   {S::kVacating, S::kQueued},
                                                   {S::kVacating, S::kFailed},
                                                   {S::kVacating, S::kCancelled}};
  for (const std::vector<JobState>& way : ways) {
    std::string name = "running";
    for (JobState s : way) name += " -> " + std::string(JobStateName(s));
    SCOPED_TRACE(name);
    const sched::JobId holder = store_->Submit("alice", 1000, Spec(2), kNow)->id;
    const sched::JobId waiter = store_->Submit("bob", 1001, Spec(), kNow)->id;
    ASSERT_TRUE(Start(holder, {"GPU-a", "GPU-b"}).ok());
    JobState at = JobState::kRunning;
    for (JobState next : way) {
      EXPECT_FALSE(Start(waiter, {"GPU-b"}).ok());
      ASSERT_TRUE(store_->Transition(holder, at, next, {}).ok());
      at = next;
    }
    auto started = Start(waiter, {"GPU-b"});
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    ASSERT_TRUE(store_->Transition(waiter, S::kRunning, S::kSucceeded, {}).ok());
  }
}

// A job whose GPUs change while it holds them (it vacates some) claims the
// new set: those it left are free.
TEST_P(JobStoreTest, ChangingARunningJobsGpusMovesItsClaims) {
  const sched::JobId shrinking = store_->Submit("alice", 1000, Spec(2), kNow)->id;
  const sched::JobId other = store_->Submit("bob", 1001, Spec(), kNow)->id;
  ASSERT_TRUE(Start(shrinking, {"GPU-a", "GPU-b"}).ok());
  JobUpdate keep_one;
  keep_one.gpus = std::vector<core::GpuUuid>{core::GpuUuid("GPU-a")};
  ASSERT_TRUE(
      store_->Transition(shrinking, JobState::kRunning, JobState::kVacating, keep_one).ok());
  EXPECT_FALSE(Start(other, {"GPU-a"}).ok());
  auto started = Start(other, {"GPU-b"});
  EXPECT_TRUE(started.ok()) << started.status().ToString();
}

TEST_P(JobStoreTest, CancellingAnArrayGivesItsGpusBack) {
  auto tasks = store_->Submit("alice", 1000, ArraySpec(0, 1, 1), kNow);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  const sched::JobId array = tasks->id;
  const sched::JobId other = store_->Submit("bob", 1001, Spec(2), kNow)->id;
  ASSERT_TRUE(Start(array, {"GPU-a"}).ok());
  ASSERT_TRUE(Start(array + 1, {"GPU-b"}).ok());
  ASSERT_TRUE(store_->Transition(array + 1, JobState::kRunning, JobState::kVacating, {}).ok());
  EXPECT_FALSE(Start(other, {"GPU-a", "GPU-b"}).ok());
  ASSERT_TRUE(store_->CancelArray(array, "cancelled by alice", "alice").ok());
  auto started = Start(other, {"GPU-a", "GPU-b"});
  EXPECT_TRUE(started.ok()) << started.status().ToString();
}

// Connections compete, and processes die: on the backends whose store
// more than one connection shares.
class JobStoreConnectionsTest : public StoreTest {};

// Connections are what compete in production: two actors, each with its
// own connection, try to start the same jobs at once. Every job is started
// exactly once; every loser is told kFailedPrecondition.
TEST_P(JobStoreConnectionsTest, RacingConnectionsStartEachJobOnce) {
  constexpr int kJobs = 40;
  std::vector<NewJob> jobs(kJobs, NewJob{"alice", 1000, Spec(), ""});
  auto saved = store_->SubmitAll(jobs, kNow);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  std::vector<std::unique_ptr<Store>> actors;
  for (int i = 0; i < 2; ++i) {
    auto opened = GetParam()->Open(where_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    actors.push_back(std::move(opened).value());
  }
  std::atomic<int> ready = 0;
  std::vector<std::vector<sched::JobId>> won(2);
  std::vector<std::string> unexpected(2);
  std::vector<std::thread> threads;
  for (int a = 0; a < 2; ++a) {
    threads.emplace_back([&, a] {
      ++ready;
      while (ready < 2) std::this_thread::yield();
      for (const JobRecord& job : *saved) {
        JobUpdate start;
        start.reason = "actor " + std::to_string(a);
        auto r = actors[static_cast<size_t>(a)]->Transition(job.id, JobState::kQueued,
                                                            JobState::kRunning, start);
        if (r.ok()) {
          won[static_cast<size_t>(a)].push_back(job.id);
        } else if (r.status().code() != core::StatusCode::kFailedPrecondition) {
          unexpected[static_cast<size_t>(a)] = r.status().ToString();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(unexpected[0], "");
  EXPECT_EQ(unexpected[1], "");
  std::set<sched::JobId> started(won[0].begin(), won[0].end());
  for (sched::JobId id : won[1]) EXPECT_TRUE(started.insert(id).second) << "job " << id << " twice";
  EXPECT_EQ(started.size(), static_cast<size_t>(kJobs));
  for (const JobRecord& job : *store_->List({})) {
    EXPECT_EQ(job.attempts, 1) << "job " << job.id;
    const size_t winner = std::count(won[0].begin(), won[0].end(), job.id) ? 0 : 1;
    EXPECT_EQ(job.reason, "actor " + std::to_string(winner)) << "job " << job.id;
  }
}

// Two actors, each with its own connection, start different jobs on the
// same GPUs at the same moment: each GPU goes to exactly one job, and every
// loser is told kFailedPrecondition.
TEST_P(JobStoreConnectionsTest, RacingConnectionsNeverShareAGpu) {
  constexpr int kGpus = 20;
  std::vector<NewJob> jobs(2 * kGpus, NewJob{"alice", 1000, Spec(), ""});
  auto saved = store_->SubmitAll(jobs, kNow);
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  std::vector<std::unique_ptr<Store>> actors;
  for (int i = 0; i < 2; ++i) {
    auto opened = GetParam()->Open(where_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    actors.push_back(std::move(opened).value());
  }
  std::atomic<int> ready = 0;
  std::vector<std::string> unexpected(2);
  std::vector<std::thread> threads;
  for (size_t a = 0; a < 2; ++a) {
    threads.emplace_back([&, a] {
      ++ready;
      while (ready < 2) std::this_thread::yield();
      for (size_t g = 0; g < kGpus; ++g) {
        const sched::JobId job = (*saved)[a * kGpus + g].id;
        auto r = actors[a]->Transition(job, JobState::kQueued, JobState::kRunning,
                                       StartOn({"GPU-" + std::to_string(g)}));
        if (!r.ok() && r.status().code() != core::StatusCode::kFailedPrecondition) {
          unexpected[a] = r.status().ToString();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(unexpected[0], "");
  EXPECT_EQ(unexpected[1], "");
  auto running = store_->List({JobState::kRunning});
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  std::set<std::string> taken;
  for (const JobRecord& job : *running) {
    ASSERT_EQ(job.gpus.size(), 1u) << "job " << job.id;
    EXPECT_TRUE(taken.insert(job.gpus.front().str()).second)
        << job.gpus.front() << " went to two jobs";
  }
  EXPECT_EQ(taken.size(), static_cast<size_t>(kGpus));
}

// Four writer processes submit as fast as they can, each reporting an id
// only after Submit returned; all are killed with SIGKILL mid-stream. Every
// acknowledged job must be in the store, exactly once.
TEST_P(JobStoreConnectionsTest, AcknowledgedSubmitsSurviveKill9) {
  int acks[2];
  ASSERT_EQ(pipe(acks), 0);
  std::vector<pid_t> writers;
  for (int w = 0; w < 4; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(acks[0]);
      auto store = GetParam()->Open(where_);
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
  auto store = GetParam()->Open(where_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto jobs = (*store)->List({});
  ASSERT_TRUE(jobs.ok());
  std::set<int64_t> stored;
  for (const JobRecord& j : *jobs) {
    EXPECT_TRUE(stored.insert(j.id).second) << "job " << j.id << " twice";
  }
  EXPECT_GE(acknowledged.size(), 300u);
  for (int64_t acked : acknowledged) EXPECT_TRUE(stored.contains(acked)) << "lost job " << acked;
}

// Processes that open a new store at the same moment (a client beside a
// starting daemon) each find it ready: none repeats another's migration or
// gives up on a lock.
TEST_P(JobStoreConnectionsTest, ManyProcessesOpenANewStoreAtOnce) {
  for (int round = 0; round < 5; ++round) {
    auto where = GetParam()->NewPlace(dir_.path());
    ASSERT_TRUE(where.ok()) << where.status().ToString();
    std::vector<pid_t> children;
    for (int i = 0; i < 4; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        auto s = GetParam()->Open(*where);
        std::_Exit(s.ok() && (*s)->List({}).ok() ? 0 : 1);
      }
      children.push_back(pid);
    }
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
  }
}

GLEANER_STORE_CONFORMANCE(JobStoreTest);
GLEANER_SHARED_STORE_CONFORMANCE(JobStoreConnectionsTest);

}  // namespace
}  // namespace gleaner::store
