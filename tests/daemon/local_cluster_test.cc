// `gleaner up`'s loop end to end (the coordinator and the agent in one
// process): a real job process starts on an idle (simulated) GPU, is
// vacated when the owner's process appears, requeued, and runs again once
// the GPU is idle again.
#include "daemon/local_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "agent/executor.h"
#include "daemon/daemon_rig.h"
#include "gpu/fake_backend.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::daemon {
namespace {

using agent::Executor;
using agent::HostMetrics;
using agent::ProcfsInspector;
using agent::Sampler;
using agent::ScenarioProcessInspector;
using ::testing::HasSubstr;
using ::testing::Not;

const cluster::Log kQuiet = [](const std::string&) {};

LocalClusterOptions OptionsIn(const std::filesystem::path& dir,
                              sched::SchedulerConfig scheduler = {}, bool shadow = false) {
  LocalClusterOptions o = ClusterOptionsIn(dir);
  o.scheduler = std::move(scheduler);
  o.shadow = shadow;
  return o;
}

// One pass of the daemon's loop: sample, then act on the pass.
void Tick(Sampler& sampler, LocalCluster& cluster, const cluster::Log& log) {
  core::Status store_status;
  auto pass = sampler.SampleOnce(&store_status);
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  cluster.Act(*pass, log);
}

// GPU 0 idle; bob's process holds it from 320 s to 400 s. GPU 1 always busy.
constexpr const char* kScenario = R"({"gpus": [
  {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "timeline": [
     {"at_s": 0},
     {"at_s": 320, "utilization_gpu_pct": 95,
      "processes": [{"pid": 4242, "used_memory_mib": 30000, "user": "bob", "command": "python train.py"}]},
     {"at_s": 400, "utilization_gpu_pct": 0, "processes": []}]},
  {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
   "timeline": [{"at_s": 0, "utilization_gpu_pct": 99,
                 "processes": [{"pid": 5555, "used_memory_mib": 70000, "user": "carol"}]}]}]})";

// Simulated GPUs with the real store (in memory), sampler, executor and
// loop.
struct Rig {
  explicit Rig(const std::string& scenario, sched::SchedulerConfig scheduler = {},
               bool shadow = false)
      : store(std::move(store::SqliteStore::Open(":memory:")).value()),
        backend(std::move(gpu::FakeBackend::Create(*gpu::ParseScenario(scenario, "rig"), clock))
                    .value()),
        sampler(*backend, procfs, nullptr, clock, {}),
        executor(real_clock),
        cluster(*store, executor, clock, OptionsIn(dir.path(), std::move(scheduler), shadow),
                kQuiet) {}

  void Tick(const cluster::Log& log) { daemon::Tick(sampler, cluster, log); }

  testing::TempDir dir;
  core::ManualClock clock;
  ProcfsInspector procfs;
  core::RealClock real_clock;
  std::unique_ptr<store::SqliteStore> store;
  std::unique_ptr<gpu::FakeBackend> backend;
  Sampler sampler;
  Executor executor;
  LocalCluster cluster;
};

TEST(LocalClusterTest, RunsVacatesRequeuesAndRunsAgain) {
  testing::TempDir dir;
  auto store = store::SqliteStore::Open((dir.path() / "gleaner.db").string());
  ASSERT_TRUE(store.ok());
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  auto scenario = gpu::ParseScenario(kScenario, "harvest");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  ProcfsInspector procfs;
  ScenarioProcessInspector inspector(*scenario, procfs);
  auto backend = gpu::FakeBackend::Create(std::move(scenario).value(), clock);
  ASSERT_TRUE(backend.ok());
  Sampler sampler(**backend, inspector, store->get(), clock, {});
  core::RealClock real_clock;
  Executor executor(real_clock);
  LocalCluster cluster(**store, executor, clock, OptionsIn(dir.path()), kQuiet);
  cluster.Recover(kQuiet);
  HostMetrics metrics("node1");
  cluster.ReportTo(&metrics);

  auto job =
      (*store)->Submit("tester", static_cast<uint32_t>(geteuid()), CheckpointingJob(), clock.Now());
  ASSERT_TRUE(job.ok());
  const auto out = dir.path() / "logs" / (std::to_string(job->id) + ".out");

  std::vector<std::string> log;
  const auto record = [&](const std::string& line) { log.push_back(line); };
  std::map<int, store::JobState> state_at;
  for (int t = 0; t <= 760; ++t) {
    Tick(sampler, cluster, record);
    state_at[t] = (*store)->Get(job->id)->state;
    if (t == 300) {
      // Simulated seconds pass in microseconds: let the job set its trap.
      for (int i = 0; i < 500 && testing::Slurp(out).empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    if (state_at[t] == store::JobState::kVacating) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // let it checkpoint
    }
    clock.Advance(core::Seconds(1));
  }
  // Idle after 5 minutes: started on GPU 0 (GPU 1 is busy).
  EXPECT_EQ(state_at[299], store::JobState::kQueued);
  EXPECT_EQ(state_at[300], store::JobState::kRunning);
  auto first = (*store)->Get(job->id);
  // The owner came back at 320 s: vacated at once, requeued when it left.
  EXPECT_EQ(state_at[320], store::JobState::kVacating);
  EXPECT_EQ(state_at[330], store::JobState::kQueued);
  // Idle again 5 minutes after bob's last busy sample (399 s): running again.
  EXPECT_EQ(state_at[698], store::JobState::kQueued);
  EXPECT_EQ(state_at[699], store::JobState::kRunning);
  EXPECT_EQ(first->attempts, 2);
  EXPECT_EQ(first->gpus,
            std::vector<core::GpuUuid>{core::GpuUuid("GPU-00000000-0000-4000-8000-000000000000")});

  std::string all;
  for (const std::string& l : log) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("started as tester"));
  // (The simulated GPU does not list the job's own pid, so the verdict
  // names the owner's utilization rather than "owner returned".)
  EXPECT_THAT(all, HasSubstr("vacating (signal 10): GPU-00000000-0000-4000-8000-000000000000: "
                             "utilization 95%"));
  EXPECT_THAT(all, HasSubstr("-> queued: vacated: "));
  EXPECT_THAT(all, HasSubstr(" gave its GPUs back "));
  EXPECT_THAT(testing::Slurp(out), HasSubstr("ready\ncheckpoint\n"));
  // /metrics counts the owner's claim, its wait and both starts (the
  // first after 300 s in the queue).
  const std::string exposition =
      metrics.Render({{}, cluster.StartLatency(), std::nullopt}, {}, false);
  EXPECT_THAT(exposition, HasSubstr("gleaner_preemptions_total{reason=\"owner_returned\"} 1\n"));
  EXPECT_THAT(exposition, HasSubstr("gleaner_preemptions_total{reason=\"scheduler\"} 0\n"));
  EXPECT_THAT(exposition, HasSubstr("gleaner_owner_return_seconds_count 1\n"));
  EXPECT_THAT(exposition, HasSubstr("gleaner_scheduling_latency_seconds_count 2\n"));
  EXPECT_THAT(exposition, HasSubstr("gleaner_scheduling_latency_seconds_bucket{le=\"300\"} 1\n"));
  executor.Signal(job->id, SIGKILL).IgnoreError();  // the second run is still going
}

TEST(LocalClusterTest, MonitorModeSaysNothingStarts) {
  testing::TempDir dir;
  auto store = store::SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  sched::JobSpec spec;
  spec.command = {"true"};
  auto job =
      (*store)->Submit("tester", static_cast<uint32_t>(geteuid()), spec, core::FromUnixMicros(0));
  SayNothingStarts(**store, kQuiet);
  EXPECT_EQ((*store)->Get(job->id)->state, store::JobState::kQueued);
  EXPECT_THAT((*store)->Get(job->id)->reason, HasSubstr("monitor mode"));
}

TEST(LocalClusterDependencyTest, WaitsForSuccessAndGivesUpOnFailure) {
  Rig rig(R"({"gpus": [{"name": "A", "memory_total_mib": 1000},
                        {"name": "A", "memory_total_mib": 1000}]})");
  auto& store = rig.store;
  auto& clock = rig.clock;
  sched::JobSpec fails;
  fails.command = {"false"};
  fails.working_dir = "/tmp";
  sched::JobSpec after = fails;
  after.command = {"true"};
  const uid_t uid = geteuid();
  const sched::JobId first = store->Submit("t", uid, fails, clock.Now())->id;
  after.after_success = {first};
  const sched::JobId second = store->Submit("t", uid, after, clock.Now())->id;
  std::vector<std::string> log;
  for (int t = 0; t < 320; ++t) {
    rig.Tick([&](const std::string& l) { log.push_back(l); });
    if (store->Get(first)->state == store::JobState::kRunning) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let `false` exit
    }
    EXPECT_NE(store->Get(second)->state, store::JobState::kRunning);
    clock.Advance(core::Seconds(1));
  }
  EXPECT_EQ(store->Get(first)->state, store::JobState::kFailed);
  EXPECT_EQ(store->Get(first)->exit_code, 1);
  EXPECT_EQ(store->Get(second)->state, store::JobState::kCancelled);
  EXPECT_THAT(store->Get(second)->reason, HasSubstr("dependency job 1 failed"));
}

// Slurm's kinds: afterany runs after a failure, afternotok only after one,
// and a dependency that can no longer be met cancels with the reason.
TEST(LocalClusterDependencyTest, EachKindHasSlurmsMeaning) {
  Rig rig(R"({"gpus": [{"name": "A", "memory_total_mib": 1000},
                        {"name": "A", "memory_total_mib": 1000}]})");
  auto& store = rig.store;
  auto& clock = rig.clock;
  const uid_t uid = geteuid();
  sched::JobSpec fails;
  fails.command = {"false"};
  fails.working_dir = "/tmp";
  sched::JobSpec succeeds = fails;
  succeeds.command = {"true"};
  const sched::JobId failing = store->Submit("t", uid, fails, clock.Now())->id;
  const sched::JobId passing = store->Submit("t", uid, succeeds, clock.Now())->id;
  sched::JobSpec after = succeeds;
  after.command = {"true"};
  std::map<std::string, sched::JobId> jobs;
  for (const auto& [name, list, on] :
       {std::tuple{"any after failure", &sched::JobSpec::after_any, failing},
        std::tuple{"notok after failure", &sched::JobSpec::after_failure, failing},
        std::tuple{"notok after success", &sched::JobSpec::after_failure, passing},
        std::tuple{"ok after success", &sched::JobSpec::after_success, passing}}) {
    sched::JobSpec spec = after;
    (spec.*list) = {on};
    jobs[name] = store->Submit("t", uid, spec, clock.Now())->id;
  }
  std::set<std::string> reasons;
  for (int t = 0; t < 320; ++t) {
    rig.Tick([](const std::string&) {});
    for (const auto& [name, id] : jobs) reasons.insert(store->Get(id)->reason);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let the jobs exit
    clock.Advance(core::Seconds(1));
    bool all_ended = true;
    for (const auto& [name, id] : jobs)
      all_ended = all_ended && store::IsFinal(store->Get(id)->state);
    if (all_ended) break;
  }
  EXPECT_EQ(store->Get(failing)->state, store::JobState::kFailed);
  EXPECT_EQ(store->Get(passing)->state, store::JobState::kSucceeded);
  EXPECT_EQ(store->Get(jobs["any after failure"])->state, store::JobState::kSucceeded);
  EXPECT_EQ(store->Get(jobs["notok after failure"])->state, store::JobState::kSucceeded);
  EXPECT_EQ(store->Get(jobs["ok after success"])->state, store::JobState::kSucceeded);
  EXPECT_EQ(store->Get(jobs["notok after success"])->state, store::JobState::kCancelled);
  EXPECT_EQ(store->Get(jobs["notok after success"])->reason,
            "dependency job 2 succeeded (afternotok)");
  EXPECT_TRUE(reasons.contains("waiting for job 1 to end")) << ::testing::PrintToString(reasons);
  EXPECT_TRUE(reasons.contains("waiting for job 1 to fail")) << ::testing::PrintToString(reasons);
}

// Slurm's singleton: a job waits while an earlier job of its user and name
// is queued or running, though a GPU is free, and starts once it ended.
TEST(LocalClusterDependencyTest, ASingletonWaitsForTheEarlierJobOfItsName) {
  Rig rig(R"({"gpus": [{"name": "A", "memory_total_mib": 1000},
                        {"name": "A", "memory_total_mib": 1000}]})");
  auto& store = rig.store;
  auto& clock = rig.clock;
  const std::string done = (rig.dir.path() / "done").string();
  sched::JobSpec first;
  first.command = {"sh", "-c", "while [ ! -e " + done + " ]; do sleep 0.01; done"};
  first.working_dir = "/tmp";
  first.name = "nightly";
  sched::JobSpec second = first;
  second.command = {"true"};
  second.singleton = true;
  sched::JobSpec other = second;
  other.name = "weekly";
  const sched::JobId a = store->Submit("t", geteuid(), first, clock.Now())->id;
  const sched::JobId b = store->Submit("t", geteuid(), second, clock.Now())->id;
  const sched::JobId c = store->Submit("t", geteuid(), other, clock.Now())->id;
  const auto tick = [&] {
    rig.Tick([](const std::string&) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    clock.Advance(core::Seconds(1));
  };
  for (int t = 0; t < 320 && store->Get(c)->state != store::JobState::kSucceeded; ++t) tick();
  EXPECT_EQ(store->Get(a)->state, store::JobState::kRunning);
  EXPECT_EQ(store->Get(b)->state, store::JobState::kQueued);
  EXPECT_EQ(store->Get(b)->reason, "waiting for job " + std::to_string(a) +
                                       ", also named \"nightly\", to end (singleton)");
  EXPECT_EQ(store->Get(c)->state, store::JobState::kSucceeded);  // another name
  std::ofstream(done) << "";
  for (int t = 0; t < 320 && store->Get(b)->state != store::JobState::kSucceeded; ++t) tick();
  EXPECT_EQ(store->Get(a)->state, store::JobState::kSucceeded);
  EXPECT_EQ(store->Get(b)->state, store::JobState::kSucceeded);
}

// An earlier job of the name that is held (or waits for an approver) has
// not ended either: the singleton waits for it too, as Slurm's does.
TEST(LocalClusterDependencyTest, ASingletonWaitsForAHeldJobOfItsName) {
  Rig rig(R"({"gpus": [{"name": "A", "memory_total_mib": 1000}]})");
  auto& store = rig.store;
  auto& clock = rig.clock;
  sched::JobSpec first;
  first.command = {"true"};
  first.working_dir = "/tmp";
  first.name = "nightly";
  sched::JobSpec second = first;
  second.singleton = true;
  const sched::JobId a = store->Submit("t", geteuid(), first, clock.Now())->id;
  store::JobUpdate hold;
  hold.reason = "held by t";
  ASSERT_TRUE(store->Transition(a, store::JobState::kQueued, store::JobState::kHeld, hold).ok());
  const sched::JobId b = store->Submit("t", geteuid(), second, clock.Now())->id;
  const auto tick = [&] {
    rig.Tick([](const std::string&) {});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    clock.Advance(core::Seconds(1));
  };
  for (int t = 0; t < 320 && store->Get(b)->reason.empty(); ++t) tick();
  for (int t = 0; t < 5; ++t) tick();
  EXPECT_EQ(store->Get(b)->state, store::JobState::kQueued);
  EXPECT_EQ(store->Get(b)->reason, "waiting for job " + std::to_string(a) +
                                       ", also named \"nightly\", to end (singleton)");
  ASSERT_TRUE(store->Transition(a, store::JobState::kHeld, store::JobState::kQueued, {}).ok());
  for (int t = 0; t < 320 && store->Get(b)->state != store::JobState::kSucceeded; ++t) tick();
  EXPECT_EQ(store->Get(a)->state, store::JobState::kSucceeded);
  EXPECT_EQ(store->Get(b)->state, store::JobState::kSucceeded);
  EXPECT_LT(*store->Get(a)->started_at, *store->Get(b)->started_at);  // one after the other
}

TEST(LocalClusterLimitsTest, AJobPastItsMaxRuntimeIsKilled) {
  Rig rig(R"({"gpus": [{"name": "A", "memory_total_mib": 1000}]})");
  auto& store = rig.store;
  auto& clock = rig.clock;
  auto& executor = rig.executor;
  sched::JobSpec spec;
  spec.command = {"sleep", "300"};
  spec.working_dir = "/tmp";
  spec.max_runtime = core::Seconds(60);
  const sched::JobId id = store->Submit("t", geteuid(), spec, clock.Now())->id;
  std::vector<std::string> log;
  for (int t = 0; t < 400 && store->Get(id)->state != store::JobState::kCancelled; ++t) {
    rig.Tick([&](const std::string& l) { log.push_back(l); });
    clock.Advance(core::Seconds(1));
  }
  auto job = store->Get(id);
  EXPECT_EQ(job->state, store::JobState::kCancelled);
  EXPECT_EQ(job->reason, "ran longer than its max_runtime of 1m00s");
  // Cancelled on the first tick past 60 s (61 s in); the loop then advanced once more.
  EXPECT_EQ(clock.Now() - *job->started_at, core::Seconds(62));
  for (int i = 0; i < 200 && !executor.running().empty(); ++i) {
    executor.Reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(executor.running().empty()) << "the job was not killed";
}

// Shadow mode: the job is placed as harvest mode would place it, but
// nothing starts; the log, the job's reason and the totals say what would
// have run where, for how long, and when the owner would have taken the
// GPU back.
TEST(LocalClusterShadowTest, PlacesJobsStartsNoneAndCountsWhatWouldHaveBeenHarvested) {
  Rig rig(kScenario, {}, /*shadow=*/true);
  sched::JobSpec spec;
  spec.command = {"sleep", "600"};
  spec.working_dir = "/tmp";
  const sched::JobId job = rig.store->Submit("t", geteuid(), spec, rig.clock.Now())->id;
  std::string log;
  for (int t = 0; t < 760; ++t) {
    rig.Tick([&](const std::string& l) { log += l + "\n"; });
    rig.clock.Advance(core::Seconds(1));
  }
  EXPECT_TRUE(rig.executor.running().empty()) << "shadow mode started a job";
  const store::JobRecord after = *rig.store->Get(job);
  EXPECT_EQ(after.state, store::JobState::kQueued);
  EXPECT_EQ(after.attempts, 0);
  EXPECT_THAT(log, HasSubstr("shadow: job 1 of t would start on GPU-"));
  EXPECT_THAT(log, HasSubstr("(shadow mode: nothing starts)"));
  // bob's process comes at 320 s: the run would have been vacated.
  EXPECT_THAT(log, HasSubstr("would have left GPU-"));
  EXPECT_THAT(log, HasSubstr(": they are no longer idle"));
  const std::optional<cluster::ShadowLedger::Totals> totals = rig.cluster.Shadow();
  ASSERT_TRUE(totals.has_value());
  EXPECT_EQ(totals->starts, 2);  // again, once the GPU was idle after bob left
  EXPECT_EQ(totals->vacated, 1);
  EXPECT_EQ(totals->gpus_now, 1);
  // Idle from about 300 s to 320 s and again from about 700 s: GPU time
  // it would have used, never more than the idle time there was.
  EXPECT_GT(totals->gpu_seconds, 40);
  EXPECT_LT(totals->gpu_seconds, 100);
  EXPECT_THAT(after.reason, HasSubstr("shadow mode: would run on GPU-"));
  store::EventQuery q;
  q.job = job;
  EXPECT_EQ(rig.store->Events(q)->size(), 1u);  // submitted; nothing else happened to it
}

// The scheduler's preemption, carried out: a critical job arrives while an
// opportunistic one holds the only idle GPU; the opportunistic job gets its
// checkpoint signal, leaves, is requeued, and the critical job starts.
TEST(LocalClusterPriorityTest, ACriticalJobPreemptsAnOpportunisticOne) {
  sched::SchedulerConfig scheduler;
  scheduler.min_runtime = core::Seconds(30);
  Rig rig(R"({"gpus": [{"name": "A", "memory_total_mib": 1000}]})", scheduler);
  sched::JobSpec sweep;
  // It checkpoints and leaves on its signal; its second attempt finishes.
  const std::string marker = (rig.dir.path() / "resumed").string();
  sweep.command = {"sh", "-c",
                   "[ -e " + marker + " ] && exit 0; touch " + marker +
                       "; trap 'exit 0' TERM; while true; do sleep 0.02; done"};
  sweep.working_dir = "/tmp";
  sweep.priority_class = sched::PriorityClass::kOpportunistic;
  sweep.grace = core::Seconds(20);
  const sched::JobId low = rig.store->Submit("t", geteuid(), sweep, rig.clock.Now())->id;
  HostMetrics metrics("node1");
  rig.cluster.ReportTo(&metrics);
  std::vector<std::string> log;
  const auto tick = [&] {
    rig.Tick([&](const std::string& l) { log.push_back(l); });
    rig.clock.Advance(core::Seconds(1));
  };
  for (int t = 0; t < 360; ++t) tick();  // idle after 300 s; then past its 30 s protection
  ASSERT_EQ(rig.store->Get(low)->state, store::JobState::kRunning);

  sched::JobSpec urgent;
  urgent.command = {"sleep", "30"};
  urgent.working_dir = "/tmp";
  urgent.priority_class = sched::PriorityClass::kCritical;
  urgent.preemptible = false;
  const sched::JobId high = rig.store->Submit("t", geteuid(), urgent, rig.clock.Now())->id;
  tick();
  EXPECT_EQ(rig.store->Get(low)->state, store::JobState::kVacating);
  EXPECT_EQ(rig.store->Get(high)->state, store::JobState::kQueued);
  for (int i = 0; i < 100 && rig.store->Get(high)->state != store::JobState::kRunning; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it checkpoint and leave
    tick();
  }
  EXPECT_EQ(rig.store->Get(high)->state, store::JobState::kRunning);
  auto requeued = rig.store->Get(low);
  EXPECT_EQ(requeued->state, store::JobState::kQueued);
  EXPECT_EQ(requeued->attempts, 1);
  std::string all;
  for (const std::string& l : log) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("job 1 vacating (signal 15): "));
  EXPECT_THAT(all, HasSubstr("-> queued: vacated: "));
  EXPECT_THAT(all, HasSubstr("for job 2 (critical, needs 1 GPU): critical work outranks "
                             "opportunistic"));
  EXPECT_THAT(metrics.Render({}, {}, false),
              HasSubstr("gleaner_preemptions_total{reason=\"scheduler\"} 1\n"));

  // The critical job ends; the preempted one runs again and finishes.
  ASSERT_TRUE(rig.executor.Signal(high, 9).ok());
  for (int i = 0; i < 200 && rig.store->Get(low)->state != store::JobState::kSucceeded; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tick();
  }
  ASSERT_EQ(rig.store->Get(low)->state, store::JobState::kSucceeded) << all;
  // Its history says all of it, in order: why it left, for whom, and how
  // it ended.
  store::EventQuery q;
  q.job = low;
  auto events = rig.store->Events(q);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> kinds;
  for (const store::EventRecord& e : *events) kinds.push_back(e.kind);
  EXPECT_THAT(kinds, ::testing::ElementsAre("submitted", "started", "vacating", "requeued",
                                            "started", "succeeded"));
  EXPECT_THAT(events->at(2).detail, HasSubstr("for job 2 (critical, needs 1 GPU)"));
  EXPECT_EQ(events->at(1).gpus.size(), 1u);
  EXPECT_EQ(events->at(5).detail, "exited 0");
}

// An elastic job takes both idle GPUs; when the owner of one comes back it
// leaves (checkpoint signal) and starts again at once on the other.
TEST(LocalClusterElasticTest, ShrinksOntoTheGpuItKeepsWhenAnOwnerReturns) {
  Rig rig(R"({"gpus": [
    {"uuid": "GPU-aaaaaaaa-0000-4000-8000-000000000000", "name": "A", "memory_total_mib": 1000,
     "timeline": [{"at_s": 0}]},
    {"uuid": "GPU-bbbbbbbb-0000-4000-8000-000000000000", "name": "A", "memory_total_mib": 1000,
     "timeline": [{"at_s": 0},
                  {"at_s": 330, "utilization_gpu_pct": 90,
                   "processes": [{"pid": 4343, "used_memory_mib": 500, "user": "bob"}]}]}]})");
  sched::JobSpec spec;
  spec.command = {"sh", "-c",
                  "trap 'exit 0' TERM; echo $CUDA_VISIBLE_DEVICES; "
                  "while true; do sleep 0.02; done"};
  spec.working_dir = "/tmp";
  spec.gpus = 1;
  spec.max_gpus = 2;
  spec.can_shrink = true;
  const sched::JobId id = rig.store->Submit("t", geteuid(), spec, rig.clock.Now())->id;
  std::vector<std::string> log;
  const auto tick = [&] {
    rig.Tick([&](const std::string& l) { log.push_back(l); });
    rig.clock.Advance(core::Seconds(1));
  };
  for (int t = 0; t < 310; ++t) tick();
  auto running = rig.store->Get(id);
  ASSERT_EQ(running->state, store::JobState::kRunning);
  EXPECT_EQ(running->gpus.size(), 2u);
  const auto out = rig.dir.path() / "logs" / (std::to_string(id) + ".out");
  for (int i = 0; i < 500 && testing::Slurp(out).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // let it start for real
  }
  for (int t = 310; t <= 331; ++t) tick();  // bob's process shows at 330
  for (int i = 0; i < 100 && rig.store->Get(id)->attempts < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it leave
    tick();
  }
  auto shrunk = rig.store->Get(id);
  EXPECT_EQ(shrunk->state, store::JobState::kRunning);
  EXPECT_EQ(shrunk->attempts, 2);
  ASSERT_EQ(shrunk->gpus.size(), 1u);
  EXPECT_EQ(shrunk->gpus[0].str(), "GPU-aaaaaaaa-0000-4000-8000-000000000000");
  std::string all;
  for (const std::string& l : log) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("-> queued: shrinking to 1 GPU(s): "));
  const auto lines = [&] {
    const std::string text = testing::Slurp(out);
    return std::count(text.begin(), text.end(), '\n');
  };
  for (int i = 0; i < 500 && lines() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the rerun's first line
  }
  EXPECT_EQ(testing::Slurp(out),
            "GPU-aaaaaaaa-0000-4000-8000-000000000000,GPU-bbbbbbbb-0000-4000-8000-000000000000\n"
            "GPU-aaaaaaaa-0000-4000-8000-000000000000\n");
  rig.executor.Signal(id, 9).IgnoreError();
}

}  // namespace
}  // namespace gleaner::daemon

namespace gleaner::daemon {
namespace {

// A data directory from before the agent's state file: the store knows the
// running job's process, and a restarted daemon takes it back rather than
// starting it a second time.
TEST(LocalClusterRecoverTest, TakesBackJobsTheStoreRecordsWithoutAStateFile) {
  Rig rig(R"({"gpus": [{"name": "A", "memory_total_mib": 1000}]})");
  sched::JobSpec spec;
  spec.command = {"sh", "-c", "echo $$ > pid; while true; do sleep 0.02; done"};
  spec.working_dir = rig.dir.path().string();
  const sched::JobId id = rig.store->Submit("t", geteuid(), spec, rig.clock.Now())->id;
  for (int t = 0; t < 320 && !rig.store->Get(id)->pid; ++t) {
    rig.Tick(kQuiet);
    rig.clock.Advance(core::Seconds(1));
  }
  ASSERT_TRUE(rig.store->Get(id)->pid.has_value());
  std::filesystem::remove(rig.dir.path() / "agent-jobs.json");

  Executor restarted(rig.real_clock);
  LocalCluster again(*rig.store, restarted, rig.clock, OptionsIn(rig.dir.path()), kQuiet);
  std::vector<std::string> log;
  const cluster::Log keep = [&](const std::string& l) { log.push_back(l); };
  again.Recover(keep);
  for (int t = 0; t < 5; ++t) Tick(rig.sampler, again, keep);
  std::string all;
  for (const std::string& l : log) all += l + "\n";
  EXPECT_THAT(all, HasSubstr("job 1 still running (pid " +
                             std::to_string(*rig.store->Get(id)->pid) + "): taken back"));
  EXPECT_THAT(all, Not(HasSubstr("started as")));
  EXPECT_EQ(rig.store->Get(id)->state, store::JobState::kRunning);
  EXPECT_EQ(rig.store->Get(id)->attempts, 1);
  EXPECT_TRUE(std::filesystem::exists(rig.dir.path() / "agent-jobs.json"));
  restarted.Signal(id, SIGKILL).IgnoreError();
}

}  // namespace
}  // namespace gleaner::daemon

namespace gleaner::daemon {
namespace {

// A pilot ([rules.lend]): of two idle GPUs only node1:1 lends; GPU 0 is
// judged as ever, says why it is not lent, and its job waits.
TEST(LocalClusterTest, OnlyThePilotsGpusLend) {
  constexpr const char* kTwoIdle = R"({"gpus": [
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "timeline": [{"at_s": 0}]},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "timeline": [{"at_s": 0}]}]})";
  testing::TempDir dir;
  auto store = store::SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  auto backend = gpu::FakeBackend::Create(*gpu::ParseScenario(kTwoIdle, "pilot"), clock);
  ASSERT_TRUE(backend.ok());
  ProcfsInspector procfs;
  agent::SamplerOptions options;
  options.host = "node1";
  options.lend_allow.gpus = {"node1:1"};
  Sampler sampler(**backend, procfs, nullptr, clock, options);
  core::RealClock real_clock;
  Executor executor(real_clock);
  LocalCluster cluster(**store, executor, clock, OptionsIn(dir.path()), kQuiet);
  cluster.Recover(kQuiet);
  sampler.WatchLending([&] { return cluster.LentGpus(); });
  sched::JobSpec spec;
  spec.command = {"sleep", "30"};
  spec.working_dir = "/tmp";
  const sched::JobId first =
      (*store)->Submit("tester", static_cast<uint32_t>(geteuid()), spec, clock.Now())->id;
  const sched::JobId second =
      (*store)->Submit("tester", static_cast<uint32_t>(geteuid()), spec, clock.Now())->id;
  const core::GpuUuid pilot = (*backend)->Snapshot()->at(1).uuid;
  observe::Verdict outside;
  for (int t = 0; t < 400 && (*store)->Get(first)->state != store::JobState::kRunning; ++t) {
    auto pass = sampler.SampleOnce();
    ASSERT_TRUE(pass.ok());
    cluster.Act(*pass, kQuiet);
    outside = pass->verdicts.at(0);
    clock.Advance(core::Seconds(1));
  }
  ASSERT_EQ((*store)->Get(first)->state, store::JobState::kRunning);
  EXPECT_EQ((*store)->Get(first)->gpus, std::vector<core::GpuUuid>{pilot});
  // Whose job it is, for the history, though `sleep` never opens the GPU.
  EXPECT_EQ(cluster.LentGpus().at(pilot).user, "tester");
  for (int t = 0; t < 30; ++t) {
    auto pass = sampler.SampleOnce();
    cluster.Act(*pass, kQuiet);
    outside = pass->verdicts.at(0);
    clock.Advance(core::Seconds(1));
  }
  EXPECT_EQ((*store)->Get(second)->state, store::JobState::kQueued);
  EXPECT_EQ(outside.state, observe::GpuState::kIdle);
  EXPECT_THAT(outside.evidence.reason,
              HasSubstr("; not lent: outside the lending allow-list ([rules.lend])"));
  EXPECT_FALSE(observe::MayLend(outside, false));
  executor.Signal(first, SIGKILL).IgnoreError();
}

}  // namespace
}  // namespace gleaner::daemon
