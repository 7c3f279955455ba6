// A coordinator and its agents in one process: the real Coordinator,
// NodeAgent, Sampler and Executor (real job processes), a SQLite store on
// disk, simulated GPUs and a manual clock. Reports and replies go through
// the protocol's JSON both ways, as over HTTP.
#include "cluster/coordinator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <thread>

#include "agent/executor.h"
#include "agent/node_agent.h"
#include "agent/process_info.h"
#include "gpu/fake_backend.h"
#include "store/sqlite_store.h"
#include "testing/temp_dir.h"

namespace gleaner::cluster {
namespace {

using observe::HolderAsk::kGiveUp;
using observe::HolderAsk::kKeep;
using observe::HolderAsk::kKill;
using observe::HolderAsk::kUnpark;

using store::JobState;
using ::testing::HasSubstr;

// One idle GPU; `owner_at_s`, when set, is when bob's process takes it.
std::string Scenario(const std::string& uuid, std::optional<int> owner_at_s = std::nullopt,
                     const std::string& model = "NVIDIA A100-SXM4-80GB") {
  std::string timeline = R"([{"at_s": 0})";
  if (owner_at_s) {
    timeline += R"(, {"at_s": )" + std::to_string(*owner_at_s) +
                R"(, "utilization_gpu_pct": 95, "processes": [{"pid": 4242,
                "used_memory_mib": 30000, "user": "bob", "command": "python train.py"}]})";
  }
  return R"({"gpus": [{"uuid": ")" + uuid + R"(", "name": ")" + model +
         R"(", "memory_total_mib": 81920, "timeline": )" + timeline + "]}]}";
}

// Agents run jobs as the submitter, by name: this test's own user.
std::string Me() { return agent::UserName(static_cast<uint32_t>(geteuid())); }

struct Cluster;

// A GPU host: simulated GPU, sampler, executor and agent. `reachable`
// false cuts it off from the coordinator (a partition).
struct Host {
  Host(Cluster& cluster, std::string host_name, const std::string& scenario);
  // A restart of the agent: a new executor and agent, the same state file.
  void Restart();
  void Act();
  bool Runs(sched::JobId id) const { return executor->running().contains(id); }

  Cluster& cluster;
  std::string name;
  agent::ProcfsInspector procfs;
  std::unique_ptr<gpu::FakeBackend> backend;
  std::unique_ptr<agent::Sampler> sampler;
  core::RealClock real_clock;
  std::unique_ptr<agent::Executor> executor;
  std::unique_ptr<agent::NodeAgent> node;
  // Set before a Restart: what the agent launches jobs through, in place of
  // the executor (which it may pass on to).
  std::unique_ptr<agent::JobRunner> runner;
  bool reachable = true;
  bool alive = true;           // false: its agent is dead (its jobs run on)
  std::vector<pid_t> orphans;  // jobs of agents that died
};

struct Cluster {
  explicit Cluster(sched::ModelPriceFn model_price = nullptr)
      : clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000)),
        store(std::move(store::SqliteStore::Open((dir.path() / "gleaner.db").string())).value()) {
    CoordinatorOptions options;
    options.silent_after = core::Seconds(10);
    options.requeue_after = core::Seconds(60);
    options.scheduler.min_runtime = core::Seconds(30);  // preemptible after 30 s
    options.scheduler.model_price = std::move(model_price);
    coordinator = std::make_unique<Coordinator>(*store, clock, options, Record());
  }

  Log Record() {
    return [this](const std::string& line) { log += line + "\n"; };
  }

  // One simulated second: every live agent's pass, then the coordinator's.
  void Step() {
    for (auto& h : hosts) h->Act();
    coordinator->Tick(Record());
    if (rival) rival->Tick(Record());
    clock.Advance(core::Seconds(1));
  }

  sched::JobId Submit(int grace_s = 5,
                      sched::PriorityClass priority = sched::PriorityClass::kNormal,
                      bool session = false) {
    sched::JobSpec spec;
    spec.priority_class = priority;
    spec.pty = session;
    spec.command = {"sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.02; done"};
    spec.working_dir = "/tmp";
    spec.grace = core::Seconds(grace_s);
    return store->Submit(Me(), static_cast<uint32_t>(geteuid()), spec, clock.Now())->id;
  }

  store::JobRecord Job(sched::JobId id) { return *store->Get(id); }

  Host& AddHost(const std::string& name, const std::string& scenario) {
    hosts.push_back(std::make_unique<Host>(*this, name, scenario));
    return *hosts.back();
  }

  // Steps until `done` or `limit` simulated seconds; whether it happened.
  bool StepUntil(const std::function<bool()>& done, int limit = 400) {
    for (int t = 0; t < limit; ++t) {
      if (done()) return true;
      Step();
      // Simulated seconds pass in microseconds: let signalled jobs exit.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return done();
  }

  ~Cluster() {
    for (auto& h : hosts) {
      for (const auto& [id, job] : h->executor->running())
        h->executor->Signal(id, SIGKILL).IgnoreError();
    }
  }

  testing::TempDir dir;
  core::ManualClock clock;
  std::unique_ptr<store::SqliteStore> store;
  std::unique_ptr<Coordinator> coordinator;
  // A second coordinator that also believes it leads (a split brain): it
  // hears the same reports, its replies are dropped.
  std::unique_ptr<store::SqliteStore> rival_store;
  std::unique_ptr<Coordinator> rival;
  std::vector<std::unique_ptr<Host>> hosts;
  std::string log;
};

Host::Host(Cluster& c, std::string host_name, const std::string& scenario)
    : cluster(c), name(std::move(host_name)) {
  backend =
      std::move(gpu::FakeBackend::Create(*gpu::ParseScenario(scenario, name), c.clock)).value();
  sampler =
      std::make_unique<agent::Sampler>(*backend, procfs, nullptr, c.clock, agent::SamplerOptions{});
  Restart();
}

void Host::Restart() {
  if (executor != nullptr) {
    // The old agent dies; its jobs run on, no longer its children. (Here
    // they are still this process's: Act reaps them as init would.)
    for (const auto& [id, job] : executor->running()) orphans.push_back(job.pid);
    node.reset();
    executor.reset();
  }
  executor = std::make_unique<agent::Executor>(real_clock);
  executor->UseTerminals(std::make_shared<core::TerminalHandoff>());
  const std::string dir = (cluster.dir.path() / name).string();
  std::filesystem::create_directories(dir);
  node = std::make_unique<agent::NodeAgent>(
      runner ? *runner : static_cast<agent::JobRunner&>(*executor), cluster.clock,
      agent::NodeAgentOptions{dir + "/logs", dir + "/agent-jobs.json", {}},
      [this](const AgentReport& report) -> core::Result<AgentReply> {
        if (!reachable) return core::Unavailable("partitioned");
        auto decoded = ReportFromJson(nlohmann::json::parse(ReportToJson(report).dump()));
        if (!decoded.ok()) return decoded.status();
        if (cluster.rival)
          cluster.rival->HandleReport(name, *decoded, cluster.Record()).status().IgnoreError();
        GLEANER_ASSIGN_OR_RETURN(
            AgentReply reply, cluster.coordinator->HandleReport(name, *decoded, cluster.Record()));
        return ReplyFromJson(nlohmann::json::parse(ReplyToJson(reply).dump()));
      });
  node->Recover(cluster.Record());
  alive = true;
}

void Host::Act() {
  for (pid_t pid : orphans) waitpid(pid, nullptr, WNOHANG);
  auto pass = sampler->SampleOnce();
  if (alive && pass.ok()) node->Act(*pass, cluster.Record());
}

TEST(CoordinatorTest, RunsAJobOnAnAgentAndRecordsItsEnd) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  sched::JobSpec spec;
  spec.command = {"sh", "-c", "exit 0"};
  spec.working_dir = "/tmp";
  const sched::JobId id =
      c.store->Submit(Me(), static_cast<uint32_t>(geteuid()), spec, c.clock.Now())->id;
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state == JobState::kRunning; }));
  EXPECT_THAT(c.Job(id).reason, HasSubstr("host a"));
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state == JobState::kSucceeded; }, 200)) << c.log;
  EXPECT_EQ(c.Job(id).attempts, 1);
  EXPECT_FALSE(a.Runs(id));
  // Idle after 5 minutes of history: placed then, started at the agent's next pass.
  EXPECT_EQ(c.coordinator->StartLatency().count, 1u);
  EXPECT_GE(c.coordinator->StartLatency().sum, 300);
  const std::vector<HostView> hosts = c.coordinator->Hosts();
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].health, HostView::Health::kUp);
  EXPECT_EQ(hosts[0].gpus.size(), 1u);
}

// A host whose user directory (LDAP, sssd) does not answer for a moment:
// its first launches fail as getpwuid_r does then, the rest go to the
// host's executor.
class FlakyRunner final : public agent::JobRunner {
 public:
  FlakyRunner(Host& host, int failures) : host_(host), failures_(failures) {}
  core::Result<agent::RunningJob> Launch(const agent::LaunchRequest& request) override {
    if (failures_-- > 0) {
      return core::Unavailable("cannot look up the user with uid " + std::to_string(request.uid) +
                               ": Connection refused");
    }
    return host_.executor->Launch(request);
  }
  core::Status Adopt(const agent::JobHandle& job) override { return host_.executor->Adopt(job); }
  std::optional<agent::JobExit> EndedWhileAway(const agent::JobHandle& job) override {
    return host_.executor->EndedWhileAway(job);
  }
  void SweepLeftovers() override { host_.executor->SweepLeftovers(); }
  std::vector<agent::JobExit> Reap() override { return host_.executor->Reap(); }
  core::Status Signal(sched::JobId id, int signal) override {
    return host_.executor->Signal(id, signal);
  }
  const std::map<sched::JobId, agent::RunningJob>& running() const override {
    return host_.executor->running();
  }

 private:
  Host& host_;
  int failures_;
};

// Before: "no user with uid 1001" for a moment failed the job for good.
// Only a host that answers that the user does not exist fails it.
TEST(CoordinatorTest, AJobWhoseUserCannotBeLookedUpForAMomentIsRequeuedNotFailed) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  a.runner = std::make_unique<FlakyRunner>(a, 1);
  a.Restart();
  sched::JobSpec spec;
  spec.command = {"sh", "-c", "exit 0"};
  spec.working_dir = "/tmp";
  const sched::JobId id =
      c.store->Submit(Me(), static_cast<uint32_t>(geteuid()), spec, c.clock.Now())->id;
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state == JobState::kSucceeded; }, 600))
      << c.log << c.Job(id).reason;
  EXPECT_GE(c.Job(id).attempts, 2);
  EXPECT_THAT(c.log, HasSubstr("did not start, requeued: could not start on this host for the "
                               "moment (cannot look up the user"));
  // A user the host says does not exist still fails at once.
  spec.command = {"true"};
  const sched::JobId nobody =
      c.store->Submit("no-such-user-here", 4'000'000'000u, spec, c.clock.Now())->id;
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(nobody).state == JobState::kFailed; }, 600)) << c.log;
  EXPECT_THAT(c.Job(nobody).reason, HasSubstr("does not exist on this host"));
}

TEST(CoordinatorTest, AJobGoesToTheCheaperUsefulGpuHourAndItsRecordSaysWhy) {
  // An H100 does 3.2 A100s' work for 2.40 an hour (0.75 per A100-hour);
  // the A100 costs 1.00. The A100 host comes first by name and by fit.
  Cluster c([](const std::string& name, core::Bytes) -> std::optional<sched::ModelPrice> {
    if (name.find("H100") != std::string::npos) return sched::ModelPrice{"H100", 2.4, 3.2};
    return sched::ModelPrice{"A100", 1.0, 1.0};
  });
  c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000", std::nullopt,
                          "NVIDIA H100 80GB HBM3"));
  // Both idle (5 minutes of history) before the job comes.
  c.StepUntil([] { return false; }, 320);
  const sched::JobId id = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state == JobState::kRunning; })) << c.log;
  EXPECT_THAT(c.Job(id).reason, HasSubstr("placed on idle GPU(s) of host b: the cheapest useful "
                                          "GPU-hour with room among the models it may use: H100 "
                                          "at 0.75 USD per A100-hour of work"));
  EXPECT_THAT(c.Job(id).reason, HasSubstr("A100 1.00"));
}

TEST(CoordinatorTest, ACancelledJobIsKilledAndItsGpuServesTheNext) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  const sched::JobId first = c.Submit();
  const sched::JobId second = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(first); }));
  store::JobUpdate cancel;
  cancel.reason = "cancelled by its owner";
  ASSERT_TRUE(c.store->Transition(first, JobState::kRunning, JobState::kCancelled, cancel).ok());
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(second); }, 30)) << c.log;
  EXPECT_FALSE(a.Runs(first));
  EXPECT_EQ(c.Job(first).state, JobState::kCancelled);
  // The reply says why, and the agent kills it at once.
  EXPECT_THAT(c.log, HasSubstr("job 1 cancelled by its owner: killing it"));
  EXPECT_THAT(c.log, HasSubstr("job 1 ended (cancelled)"));
}

TEST(CoordinatorTest, ACriticalJobPreemptsAnOpportunisticOneOnAnotherHostsAgent) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  const sched::JobId cheap = c.Submit(5, sched::PriorityClass::kOpportunistic);
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(cheap); }));
  for (int i = 0; i < 35; ++i) c.Step();  // past its protection
  const sched::JobId critical = c.Submit(5, sched::PriorityClass::kCritical);
  // The scheduler preempts; the reply tells the agent; the agent sends the
  // checkpoint signal; the job leaves and is requeued; the critical job runs.
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(critical); }, 30)) << c.log;
  EXPECT_FALSE(a.Runs(cheap));
  EXPECT_EQ(c.Job(cheap).state, JobState::kQueued);
  EXPECT_THAT(c.log, HasSubstr("job 1 vacating (signal 15)"));
  EXPECT_THAT(c.log, HasSubstr("job 1 on host a vacating -> queued: vacated: "));
}

TEST(CoordinatorTest, AVacatedSessionEndsRatherThanWaitingToStartAgainForNobody) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  const sched::JobId session = c.Submit(5, sched::PriorityClass::kOpportunistic, true);
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(session); })) << c.log;
  for (int i = 0; i < 35; ++i) c.Step();  // past its protection
  const sched::JobId critical = c.Submit(5, sched::PriorityClass::kCritical);
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(critical); }, 30)) << c.log;
  EXPECT_EQ(c.Job(session).state, JobState::kCancelled);
  EXPECT_THAT(c.Job(session).reason,
              HasSubstr("the session was ended (a session is never requeued): vacated: "));
}

TEST(CoordinatorTest, APartitionedHostStopsItsJobBeforeItIsRequeuedElsewhere) {
  Cluster c;
  c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000"));
  const sched::JobId id = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return c.hosts[0]->Runs(id) || c.hosts[1]->Runs(id); }));
  Host& first = c.hosts[0]->Runs(id) ? *c.hosts[0] : *c.hosts[1];
  Host& second = &first == c.hosts[0].get() ? *c.hosts[1] : *c.hosts[0];
  first.reachable = false;
  bool twice = false;
  ASSERT_TRUE(c.StepUntil([&] {
    twice = twice || (first.Runs(id) && second.Runs(id));
    return second.Runs(id);
  })) << c.log;
  EXPECT_FALSE(twice) << "the job ran on both hosts at once\n" << c.log;
  EXPECT_FALSE(first.Runs(id));
  EXPECT_THAT(c.log, HasSubstr("past the lease of 1m00s"));
  EXPECT_THAT(c.log,
              HasSubstr("job 1 requeued: host a silent for 1m21s; its agent's lease ran out"));
  // The partition heals: the old attempt's end changes nothing.
  first.reachable = true;
  for (int i = 0; i < 5; ++i) c.Step();
  EXPECT_EQ(c.Job(id).state, JobState::kRunning);
  EXPECT_EQ(c.Job(id).attempts, 2);
  EXPECT_TRUE(second.Runs(id));
}

// A gang of one GPU on each of hosts a and b: `script` runs on both.
sched::JobId SubmitGang(Cluster& c, const std::string& script) {
  sched::JobSpec spec;
  spec.nodes = 2;
  spec.command = {"sh", "-c", script};
  spec.working_dir = "/tmp";
  spec.grace = core::Seconds(5);
  return c.store->Submit(Me(), static_cast<uint32_t>(geteuid()), spec, c.clock.Now())->id;
}

std::string LogOf(Cluster& c, const std::string& host, sched::JobId id) {
  return testing::Slurp((c.dir.path() / host / "logs" / (std::to_string(id) + ".out")).string());
}

constexpr const char* kRendezvous =
    "echo \"rank $RANK of $WORLD_SIZE local $LOCAL_RANK master $MASTER_ADDR:$MASTER_PORT gpus "
    "$GPUS_PER_NODE\"; cat \"$GLEANER_HOSTFILE\"; trap 'exit 0' TERM; "
    "while true; do sleep 0.02; done";

TEST(CoordinatorTest, AGangRunsAcrossTwoAgentsWithItsRendezvousAndIsVacatedTogether) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  // bob comes back to b's GPU at 400 s, after the gang has started.
  Host& b = c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000", 400));
  const sched::JobId id = SubmitGang(c, kRendezvous);
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id) && b.Runs(id); })) << c.log;
  EXPECT_THAT(c.Job(id).reason, HasSubstr("placed on idle GPU(s) of hosts a, b"));
  EXPECT_EQ(c.Job(id).gpus.size(), 2u);
  // The members' processes write their rendezvous on their own: wait in
  // real time (a loaded machine starts them slowly), not in simulated
  // seconds, which would bring bob back first.
  const auto written = [&] {
    return LogOf(c, "a", id).find("b slots") != std::string::npos &&
           LogOf(c, "b", id).find("b slots") != std::string::npos;
  };
  for (int i = 0; i < 1000 && !written(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string port = std::to_string(GangPort(id));
  EXPECT_THAT(LogOf(c, "a", id), HasSubstr("rank 0 of 2 local 0 master a:" + port +
                                           " gpus 1\n"
                                           "a slots=1\nb slots=1\n"));
  EXPECT_THAT(LogOf(c, "b", id), HasSubstr("rank 1 of 2 local 0 master a:" + port + " gpus 1\n"));
  // The owner takes b back: b's agent vacates its member at once, and the
  // coordinator stops a's; the gang is requeued as one and waits for two
  // hosts with room.
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state == JobState::kQueued; }, 150)) << c.log;
  EXPECT_FALSE(a.Runs(id));
  EXPECT_FALSE(b.Runs(id));
  EXPECT_THAT(c.log, HasSubstr("job 1 (a gang of 2 nodes) vacating -> queued: rank 1 on host b: "
                               "vacated: GPU-bbbbbbbb"))
      << c.log;
  EXPECT_THAT(c.Job(id).reason, HasSubstr("needs 2 nodes with 1 GPU free each"));
  EXPECT_EQ(c.Job(id).attempts, 1);
}

TEST(CoordinatorTest, AGangVacatedByOneMemberSaysSoEvenWhenAnotherMembersEndIsHeardFirst) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  Host& b = c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000", 400));
  // Rank 1 (on b) takes a while to save its state; rank 0, stopped because
  // b's owner came back, leaves at once and is heard first.
  const sched::JobId id = SubmitGang(
      c,
      "if [ \"$RANK\" = 1 ]; then trap 'sleep 0.3; exit 0' TERM; else trap 'exit 0' TERM; fi; "
      "echo up; while true; do sleep 0.02; done");
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id) && b.Runs(id); })) << c.log;
  const auto up = [&] {
    return LogOf(c, "a", id).find("up") != std::string::npos &&
           LogOf(c, "b", id).find("up") != std::string::npos;
  };
  for (int i = 0; i < 1000 && !up(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state == JobState::kQueued; }, 400)) << c.log;
  EXPECT_THAT(c.log, HasSubstr("job 1 rank 0 on host a ended")) << c.log;
  EXPECT_THAT(c.log, HasSubstr("job 1 (a gang of 2 nodes) vacating -> queued: rank 1 on host b: "
                               "vacated: GPU-bbbbbbbb"))
      << c.log;
}

TEST(CoordinatorTest, AGangSucceedsWhenEveryMemberDoesAndFailsWithTheFirstThatFails) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  Host& b = c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000"));
  const sched::JobId ok = SubmitGang(c, "exit 0");
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(ok).state == JobState::kSucceeded; })) << c.log;
  EXPECT_EQ(c.Job(ok).reason, "every member of the gang exited 0 (2 nodes)");
  // Rank 1 fails; rank 0, which would run on, is stopped; the gang fails
  // with rank 1's reason.
  const sched::JobId bad = SubmitGang(
      c, "[ \"$RANK\" = 1 ] && exit 3; trap 'exit 0' TERM; while true; do sleep 0.02; done");
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(bad).state == JobState::kFailed; }, 60)) << c.log;
  EXPECT_THAT(c.Job(bad).reason, HasSubstr("rank 1 on host b: exit"));
  EXPECT_THAT(c.Job(bad).reason, HasSubstr("3"));
  EXPECT_FALSE(a.Runs(bad));
  EXPECT_FALSE(b.Runs(bad));
}

TEST(CoordinatorTest, AHostLostWhileAGangStartsRequeuesTheWholeGangWithNothingLeftRunning) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  Host& b = c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000"));
  c.StepUntil([] { return false; }, 305);  // both idle
  const sched::JobId id = SubmitGang(c, kRendezvous);
  // b is cut off as the gang is assigned: only a's member starts.
  b.reachable = false;
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id); }, 20)) << c.log;
  EXPECT_FALSE(b.Runs(id));
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state == JobState::kQueued; }, 150)) << c.log;
  ASSERT_TRUE(c.StepUntil([&] { return !a.Runs(id); }, 10)) << c.log;
  EXPECT_FALSE(b.Runs(id));
  EXPECT_THAT(c.log, HasSubstr("requeued: host b silent"));
}

// A new leader hears its hosts one by one: a gang sized for the whole
// cluster is not refused while part of it has yet to report.
TEST(CoordinatorTest, ANewLeaderWaitsForTheHostsItKnowsBeforeJudgingAGang) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  Host& b = c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000"));
  c.StepUntil([] { return false; }, 305);  // both idle and known to the store
  CoordinatorOptions options;
  options.requeue_after = core::Seconds(60);
  options.silent_after = core::Seconds(30);  // an agent cut off retries after a pause
  c.coordinator = std::make_unique<Coordinator>(*c.store, c.clock, options, c.Record());
  b.reachable = false;  // b's first reports to the new leader are lost
  const sched::JobId id = SubmitGang(c, kRendezvous);
  for (int i = 0; i < 5; ++i) c.Step();
  EXPECT_EQ(c.Job(id).state, JobState::kQueued) << c.log;
  b.reachable = true;
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id) && b.Runs(id); }, 20)) << c.log;
  EXPECT_THAT(c.log, ::testing::Not(HasSubstr("cannot run in this cluster")));
}

TEST(CoordinatorTest, AHostSilentForLessThanTheLeaseKeepsItsJobs) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000"));
  const sched::JobId id = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id) || c.hosts[1]->Runs(id); }));
  Host& first = a.Runs(id) ? a : *c.hosts[1];
  first.reachable = false;
  for (int i = 0; i < 30; ++i) c.Step();  // silent (10 s), not lost (1 min)
  EXPECT_THAT(c.log, HasSubstr("silent for 11s"));
  first.reachable = true;
  for (int i = 0; i < 5; ++i) c.Step();
  EXPECT_TRUE(first.Runs(id)) << c.log;
  EXPECT_EQ(c.Job(id).state, JobState::kRunning);
  EXPECT_EQ(c.Job(id).attempts, 1);
  EXPECT_THAT(c.log, ::testing::Not(HasSubstr("vacating")));
}

TEST(CoordinatorTest, ARestartedAgentTakesItsJobBackOrStopsADuplicate) {
  Cluster c;
  c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  c.AddHost("b", Scenario("GPU-bbbbbbbb-0000-4000-8000-000000000000"));
  const sched::JobId id = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return c.hosts[0]->Runs(id) || c.hosts[1]->Runs(id); }));
  Host& first = c.hosts[0]->Runs(id) ? *c.hosts[0] : *c.hosts[1];
  Host& second = &first == c.hosts[0].get() ? *c.hosts[1] : *c.hosts[0];
  for (int i = 0; i < 3; ++i) c.Step();  // the start is reported
  // A quick restart: the job is taken back, not started again.
  first.Restart();
  for (int i = 0; i < 5; ++i) c.Step();
  EXPECT_TRUE(first.Runs(id));
  EXPECT_EQ(c.Job(id).attempts, 1);
  EXPECT_THAT(c.log, HasSubstr("taken back"));
  // A dead agent (kill -9: its job runs on) past the lease: the job is
  // requeued and runs on the other host...
  first.alive = false;
  ASSERT_TRUE(c.StepUntil([&] { return second.Runs(id); }, 120)) << c.log;
  EXPECT_EQ(c.Job(id).attempts, 2);
  // ...and when the agent comes back, past the lease it kept on disk, it
  // stops the copy it still runs at once.
  first.Restart();
  ASSERT_TRUE(c.StepUntil([&] { return !first.Runs(id); }, 10)) << c.log;
  EXPECT_THAT(c.log, HasSubstr("past the lease of 1m00s"));
  EXPECT_TRUE(second.Runs(id));
  EXPECT_EQ(c.Job(id).state, JobState::kRunning);
}

TEST(CoordinatorTest, AJobThatEndsWhileItsAgentIsDownIsRecordedAsItEnded) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  const sched::JobId id = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id); }));
  for (int i = 0; i < 3; ++i) c.Step();
  const pid_t first_process = a.executor->running().at(id).pid;
  a.alive = false;  // the agent dies; the job ends meanwhile (exit 0 on TERM)
  ASSERT_EQ(kill(-first_process, SIGTERM), 0);
  ASSERT_EQ(waitpid(first_process, nullptr, 0), first_process);  // as init would
  a.Restart();
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state != JobState::kRunning; }, 10)) << c.log;
  EXPECT_EQ(c.Job(id).state, JobState::kSucceeded) << c.log;
  EXPECT_EQ(c.Job(id).attempts, 1);  // not run again
}

TEST(CoordinatorTest, AnAgentRestartedWhileCutOffStillStopsItsJobsAtTheLease) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  const sched::JobId id = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id); }));
  for (int i = 0; i < 15; ++i) c.Step();  // the reply's lease is on disk by now
  a.reachable = false;
  a.Restart();
  ASSERT_TRUE(a.Runs(id));
  // The lease (1 min) runs out since the last reply before the restart.
  ASSERT_TRUE(c.StepUntil([&] { return !a.Runs(id); }, 70)) << c.log;
  EXPECT_THAT(c.log, HasSubstr("past the lease of 1m00s"));
}

TEST(CoordinatorTest, OwnersGetTheirGpuBackWhileTheCoordinatorIsAway) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000", 330));
  const sched::JobId id = c.Submit(20);
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id); }));
  a.reachable = false;
  // bob's process appears at 330 s: the job is signalled and leaves.
  ASSERT_TRUE(c.StepUntil([&] { return !a.Runs(id); }, 60)) << c.log;
  EXPECT_THAT(c.log, HasSubstr("vacating (signal 15)"));
  EXPECT_EQ(c.Job(id).state, JobState::kRunning);  // the coordinator has not heard yet
  a.reachable = true;
  c.Step();
  EXPECT_EQ(c.Job(id).state, JobState::kQueued);
  EXPECT_THAT(c.log, HasSubstr("job 1 on host a vacating -> queued: vacated: "));
}

TEST(CoordinatorTest, ANewLeaderLetsRunningJobsRunAndFinish) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  const sched::JobId id = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id); }));
  for (int i = 0; i < 3; ++i) c.Step();
  // The leader dies; another takes over with only the store to go by.
  CoordinatorOptions options;
  options.requeue_after = core::Seconds(60);
  c.coordinator = std::make_unique<Coordinator>(*c.store, c.clock, options, c.Record());
  EXPECT_THAT(c.log, HasSubstr("host a holds 1 job(s); waiting for its agent to report"));
  for (int i = 0; i < 5; ++i) c.Step();
  EXPECT_TRUE(a.Runs(id)) << c.log;
  EXPECT_EQ(c.Job(id).state, JobState::kRunning);
  a.executor->Signal(id, SIGTERM).IgnoreError();  // it exits 0 on TERM
  ASSERT_TRUE(c.StepUntil([&] { return c.Job(id).state == JobState::kSucceeded; }, 20)) << c.log;
  EXPECT_EQ(c.Job(id).attempts, 1);
}

// A new leader's scheduler counts the jobs already running: it can preempt
// one for critical work, which it could not if they ran outside its view.
TEST(CoordinatorTest, ANewLeaderCanPreemptAJobItDidNotStart) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  const sched::JobId cheap = c.Submit(5, sched::PriorityClass::kOpportunistic);
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(cheap); }));
  CoordinatorOptions options;
  options.requeue_after = core::Seconds(60);
  options.scheduler.min_runtime = core::Seconds(30);
  c.coordinator = std::make_unique<Coordinator>(*c.store, c.clock, options, c.Record());
  for (int i = 0; i < 35; ++i) c.Step();  // past its protection
  const sched::JobId critical = c.Submit(5, sched::PriorityClass::kCritical);
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(critical); }, 30)) << c.log;
  EXPECT_FALSE(a.Runs(cheap));
  EXPECT_EQ(c.Job(cheap).state, JobState::kQueued);
  EXPECT_THAT(c.log, HasSubstr("for job 2 (critical"));
}

// A pass that read no GPU (the driver failed, the daemon stopping) says
// nothing of them: nothing new is lent there, and the jobs keep running.
TEST(CoordinatorTest, AHostWhoseDriverFailsKeepsItsJobsAndLendsNothingNew) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  for (int i = 0; i < 310; ++i) c.Step();  // its GPU is idle, and known
  const auto blind_passes = [&](int n) {
    for (int i = 0; i < n; ++i) {
      a.node->Act(agent::HostPass{c.clock.Now(), {}, {}, {}}, c.Record());
      c.coordinator->Tick(c.Record());
      c.clock.Advance(core::Seconds(1));
    }
  };
  const sched::JobId id = c.Submit();
  blind_passes(5);
  EXPECT_EQ(c.Job(id).state, JobState::kQueued) << c.log;
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(id); }));
  blind_passes(5);
  EXPECT_TRUE(a.Runs(id)) << c.log;
  EXPECT_EQ(c.Job(id).state, JobState::kRunning);
}

// Rolling upgrades: the version before is served; others are told what to
// upgrade.
TEST(CoordinatorTest, AcceptsTheProtocolVersionBeforeItsOwnAndRefusesOthersClearly) {
  Cluster c;
  AgentReport report;
  report.protocol = kOldestProtocolVersion;
  EXPECT_TRUE(c.coordinator->HandleReport("a", report, c.Record()).ok());
  report.protocol = kProtocolVersion + 1;
  auto newer = c.coordinator->HandleReport("a", report, c.Record());
  EXPECT_EQ(newer.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(newer.status().message(), HasSubstr("upgrade the coordinators first"));
  report.protocol = kOldestProtocolVersion - 1;
  auto older = c.coordinator->HandleReport("a", report, c.Record());
  EXPECT_EQ(older.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(older.status().message(),
              HasSubstr("agent a speaks protocol " + std::to_string(kOldestProtocolVersion - 1)));
  EXPECT_THAT(older.status().message(), HasSubstr("upgrade the agent"));
}

TEST(CoordinatorTest, TwoLeadersNeverRunTwoJobsOnOneGpu) {
  Cluster c;
  CoordinatorOptions options;
  c.rival_store =
      std::move(store::SqliteStore::Open((c.dir.path() / "gleaner.db").string())).value();
  c.rival = std::make_unique<Coordinator>(*c.rival_store, c.clock, options, c.Record());
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  const sched::JobId first = c.Submit();
  const sched::JobId second = c.Submit();
  ASSERT_TRUE(c.StepUntil([&] { return a.Runs(first) || a.Runs(second); }));
  for (int i = 0; i < 5; ++i) c.Step();
  // Whichever placed first, the other sees the GPU taken in the store (and
  // the store refuses a second claim: Store/JobStoreTest.AGpuIsNever...).
  const int running =
      (c.Job(first).state == JobState::kRunning) + (c.Job(second).state == JobState::kRunning);
  EXPECT_EQ(running, 1) << c.log;
  EXPECT_EQ(a.executor->running().size(), 1u);
}

TEST(CoordinatorTest, AVerdictThatChangedWhileCutOffArrivesWithItsReason) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000", 330));
  for (int t = 0; t < 320; ++t) c.Step();
  EXPECT_EQ(c.coordinator->Hosts()[0].status[0].state, observe::GpuState::kIdle);
  a.reachable = false;  // bob's process arrives at 330 s, unheard
  for (int t = 0; t < 20; ++t) c.Step();
  a.reachable = true;
  c.Step();
  const HostView host = c.coordinator->Hosts()[0];
  EXPECT_EQ(host.status[0].state, observe::GpuState::kBusy);
  EXPECT_THAT(host.reasons[0], HasSubstr("utilization 95%"));
}

// A one-GPU host's report of alice's busy minute.
AgentReport ReportOfAMinute(const core::Clock& clock) {
  AgentReport r;
  r.inventory = {{core::GpuUuid("GPU-1"), 0, "NVIDIA H100 80GB HBM3", core::Bytes::GiB(80), -1}};
  r.gpus = {GpuStatus{}};
  observe::MinuteRollup m;
  m.uuid = core::GpuUuid("GPU-1");
  m.minute = observe::MinuteOf(clock.Now() - core::Seconds(60));
  m.samples = 60;
  m.utilization_mean_pct = 80;
  m.users = {"alice"};
  m.state = observe::GpuState::kBusy;
  m.observed = m.busy = core::Seconds(60);
  r.minutes = {m};
  return r;
}

TEST(CoordinatorTest, KeepsTheMinutesAgentsSendAndLearnsProfilesFromThem) {
  Cluster c;
  const AgentReport r = ReportOfAMinute(c.clock);
  const observe::MinuteRollup& m = r.minutes.front();
  ASSERT_TRUE(c.coordinator->HandleReport("a", r, c.Record()).ok());
  auto kept = c.store->RollupsBetween(m.minute, m.minute + core::Seconds(60));
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ(kept->front(), m);
  auto users = c.store->Profiles("user");
  ASSERT_TRUE(users.ok());
  ASSERT_TRUE(users->contains("alice"));
  EXPECT_EQ(users->at("alice").busy_s[static_cast<size_t>(observe::HourOfWeek(m.minute))], 60);
  auto gpus = c.store->Gpus();
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ(gpus->front().host, "a");  // priced and labelled by its host
}

// An agent that hears no answer sends its report again, to the same leader
// or to the next: its minutes count once. The reports' writes take a store
// connection of their own, as a server's do.
TEST(CoordinatorTest, AReportSentAgainCountsItsMinutesOnce) {
  Cluster c;
  auto reports = store::SqliteStore::Open((c.dir.path() / "gleaner.db").string());
  ASSERT_TRUE(reports.ok());
  const auto lead = [&] {
    c.coordinator = std::make_unique<Coordinator>(*c.store, c.clock, CoordinatorOptions{},
                                                  c.Record(), reports->get());
  };
  lead();
  AgentReport r = ReportOfAMinute(c.clock);
  r.run = "00c0ffee";
  ASSERT_TRUE(c.coordinator->HandleReport("a", r, c.Record()).ok());
  ASSERT_TRUE(c.coordinator->HandleReport("a", r, c.Record()).ok());
  lead();  // a new leader hears it a third time
  ASSERT_TRUE(c.coordinator->HandleReport("a", r, c.Record()).ok());
  const observe::MinuteRollup& m = r.minutes.front();
  auto kept = c.store->RollupsBetween(m.minute, m.minute + core::Seconds(60));
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ(kept->front(), m);
  EXPECT_EQ(c.store->Profiles("user")
                ->at("alice")
                .busy_s[static_cast<size_t>(observe::HourOfWeek(m.minute))],
            60);
  EXPECT_EQ(c.store->Gpus()->size(), 1u);
}

// 10,000 agents' minutes would reach their coordinator in the same second:
// each agent sends its own within 45 s of the minute's end, set by its run
// name, and a backlog at once.
TEST(CoordinatorTest, AnAgentSpreadsItsMinutesOverTheNextMinuteAndSendsABacklogAtOnce) {
  std::array<int, 9> per_five_seconds{};
  for (int i = 0; i < 9000; ++i) {
    const core::Duration delay = agent::MinuteSendDelay(std::to_string(i * 7919));
    ASSERT_GE(delay, core::Duration{});
    ASSERT_LT(delay, core::Seconds(45));
    ++per_five_seconds[static_cast<size_t>(delay / core::Seconds(5))];
  }
  for (const int n : per_five_seconds) EXPECT_GT(n, 800);  // 1,000 each when even

  Cluster c;
  const core::GpuUuid gpu("GPU-aaaaaaaa-0000-4000-8000-000000000000");
  Host& a = c.AddHost("a", Scenario(gpu.str()));
  c.Step();  // its inventory
  observe::MinuteRollup m;
  m.uuid = gpu;
  m.minute = observe::MinuteOf(c.clock.Now() - core::Seconds(60));
  m.samples = 60;
  m.state = observe::GpuState::kIdle;
  m.observed = m.idle = core::Seconds(60);
  const auto kept = [&](const observe::MinuteRollup& one) {
    auto rows = c.store->RollupsBetween(one.minute, one.minute + core::Seconds(60));
    return rows.ok() && !rows->empty();
  };
  a.node->AddMinutes({m});
  ASSERT_TRUE(c.StepUntil([&] { return kept(m); }, 47));
  EXPECT_LE(c.clock.Now(), m.minute + core::Seconds(60 + 45 + 2));

  observe::MinuteRollup old = m;
  old.minute = m.minute - core::Seconds(600);  // its coordinator was away
  a.node->AddMinutes({old});
  c.Step();
  EXPECT_TRUE(kept(old));
}

TEST(CoordinatorTest, AsksForTheInventoryAndRefusesAGpuTwoHostsClaim) {
  Cluster c;
  AgentReport bare;
  auto reply = c.coordinator->HandleReport("a", bare, c.Record());
  ASSERT_TRUE(reply.ok());
  EXPECT_TRUE(reply->send_inventory);
  AgentReport with;
  with.inventory = {{core::GpuUuid("GPU-1"), 0, "A100", core::Bytes::GiB(80), -1}};
  with.gpus = {GpuStatus{}};
  ASSERT_TRUE(c.coordinator->HandleReport("a", with, c.Record()).ok());
  auto twice = c.coordinator->HandleReport("b", with, c.Record());
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("GPU-1 is already reported by host a"));
}

// Before: after a coordinator restarted (or failed over), any agent could
// report another host's GPUs while that host had not reported yet, and
// then received the jobs placed on them, with their users' environments.
TEST(CoordinatorTest, AGpuStaysWithItsHostAcrossRestartsUntilRootForgetsTheHost) {
  Cluster c;
  AgentReport with;
  with.inventory = {{core::GpuUuid("GPU-1"), 0, "A100", core::Bytes::GiB(80), -1}};
  with.gpus = {GpuStatus{}};
  ASSERT_TRUE(c.coordinator->HandleReport("a", with, c.Record()).ok());
  // A restart: a new coordinator on the same store; host a has not
  // reported since.
  CoordinatorOptions options;
  options.max_gpus_per_host = 2;
  c.coordinator = std::make_unique<Coordinator>(*c.store, c.clock, options, c.Record());
  auto rogue = c.coordinator->HandleReport("b", with, c.Record());
  ASSERT_FALSE(rogue.ok());
  EXPECT_EQ(rogue.status().code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(rogue.status().message(), HasSubstr("GPU-1 is already reported by host a"));
  EXPECT_THAT(rogue.status().message(), HasSubstr("gleaner host forget a"));
  c.clock.Advance(core::Seconds(3600));  // a long gone: still its
  EXPECT_FALSE(c.coordinator->HandleReport("b", with, c.Record()).ok());
  // Too many GPUs for one host.
  AgentReport many;
  many.inventory = std::vector<InventoryGpu>{};
  for (int i = 0; i < 3; ++i) {
    many.inventory->push_back(
        {core::GpuUuid("GPU-m" + std::to_string(i)), i, "A100", core::Bytes::GiB(80), -1});
  }
  many.gpus.assign(3, GpuStatus{});
  auto swallow = c.coordinator->HandleReport("m", many, c.Record());
  ASSERT_FALSE(swallow.ok());
  EXPECT_THAT(swallow.status().message(), HasSubstr("reports 3 GPUs, more than the 2"));
  // Root forgets host a: its GPU may be reported by b, and is b's from then on.
  auto forgotten = c.coordinator->ForgetHost("a", c.Record());
  ASSERT_TRUE(forgotten.ok()) << forgotten.status().message();
  EXPECT_EQ(*forgotten, 1);
  ASSERT_TRUE(c.coordinator->HandleReport("b", with, c.Record()).ok());
  auto gpus = c.store->Gpus();
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].host, "b");
  // A host that reports now is not forgotten.
  EXPECT_EQ(c.coordinator->ForgetHost("b", c.Record()).status().code(),
            core::StatusCode::kFailedPrecondition);
}

// Before: a refused report read "coordinator unreachable" in the agent's
// log, and a first report refused said nothing at all.
TEST(CoordinatorTest, AnAgentSaysOnceWhyItsReportsAreRefused) {
  Cluster c;
  c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  c.Step();
  c.AddHost("b", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  for (int i = 0; i < 5; ++i) c.Step();
  const std::string said =
      "the coordinator refused this host's report: GPU GPU-aaaaaaaa-0000-4000-8000-000000000000 "
      "is already reported by host a";
  EXPECT_THAT(c.log, HasSubstr(said));
  EXPECT_EQ(c.log.find(said), c.log.rfind(said)) << c.log;
  EXPECT_THAT(c.log, Not(HasSubstr("coordinator unreachable")));
}

// Before: a host that had joined could add GPUs it does not have (up to
// the limit), and received the jobs placed on them, with their users'
// environments.
TEST(CoordinatorTest, GpusAHostReportsAfterItJoinedWaitForRoot) {
  Cluster c;
  AgentReport with;
  with.inventory = {{core::GpuUuid("GPU-1"), 0, "A100", core::Bytes::GiB(80), -1}};
  with.gpus = {GpuStatus{}};
  ASSERT_TRUE(c.coordinator->HandleReport("a", with, c.Record()).ok());  // its first join
  EXPECT_EQ(c.coordinator->AcceptHostGpus("a", c.Record()).status().code(),
            core::StatusCode::kFailedPrecondition);

  AgentReport grown = with;
  grown.inventory->push_back({core::GpuUuid("GPU-2"), 1, "A100", core::Bytes::GiB(80), -1});
  grown.gpus.assign(2, GpuStatus{});
  c.log.clear();
  for (int i = 0; i < 3; ++i) {
    auto refused = c.coordinator->HandleReport("a", grown, c.Record());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), core::StatusCode::kPermissionDenied);
    EXPECT_THAT(refused.status().message(),
                HasSubstr("reports 1 GPU(s) it did not join with (GPU-2)"));
    EXPECT_THAT(refused.status().message(), HasSubstr("gleaner host accept a"));
  }
  EXPECT_EQ(c.log.find("did not join with"), c.log.rfind("did not join with"))
      << "said once, not at every report:\n"
      << c.log;
  ASSERT_EQ(c.store->Gpus()->size(), 1u);
  // Meanwhile the GPU it joined with, idle, is lent to no one: what the
  // host reports cannot be matched to it. Before: the last accepted report
  // stood, the host never went silent, and jobs went there.
  AgentReport idle = with;
  idle.gpus[0].state = observe::GpuState::kIdle;
  idle.gpus[0].lendable_free = true;
  ASSERT_TRUE(c.coordinator->HandleReport("a", idle, c.Record()).ok());
  grown.gpus[0] = idle.gpus[0];
  const sched::JobId waiting = c.Submit();
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(c.coordinator->HandleReport("a", grown, c.Record()).ok());
    c.coordinator->Tick(c.Record());
    c.clock.Advance(core::Seconds(1));
  }
  EXPECT_EQ(c.Job(waiting).state, store::JobState::kQueued) << c.log;
  grown.gpus[0] = GpuStatus{};
  // One GPU fewer needs no one.
  AgentReport shrunk = with;
  shrunk.inventory->clear();
  shrunk.gpus.clear();
  EXPECT_TRUE(c.coordinator->HandleReport("a", shrunk, c.Record()).ok());

  // Root accepts: it is the host's, across restarts.
  ASSERT_FALSE(c.coordinator->HandleReport("a", grown, c.Record()).ok());
  auto accepted = c.coordinator->AcceptHostGpus("a", c.Record());
  ASSERT_TRUE(accepted.ok()) << accepted.status().message();
  EXPECT_EQ(*accepted, 1);
  EXPECT_THAT(c.log, HasSubstr("host a: 1 new GPU(s) accepted (GPU-2)"));
  ASSERT_TRUE(c.coordinator->HandleReport("a", grown, c.Record()).ok());
  c.coordinator =
      std::make_unique<Coordinator>(*c.store, c.clock, CoordinatorOptions{}, c.Record());
  EXPECT_TRUE(c.coordinator->HandleReport("a", grown, c.Record()).ok());
  auto b = c.coordinator->HandleReport("b", grown, c.Record());
  EXPECT_THAT(b.status().message(), HasSubstr("GPU-1 is already reported by host a"));
}

// `gleaner keep` and `unpark` on a cluster: the coordinator checks who asks
// against what the GPU's host last reported (its holders' users, its
// parked holder), then passes the request on in the host's next reply.
TEST(CoordinatorTest, KeepAndUnparkGoToTheHostForTheHoldersUserOnly) {
  Cluster c;
  const core::GpuUuid gpu("GPU-1");
  AgentReport report;
  report.inventory = {{gpu, 0, "A100", core::Bytes::GiB(80), -1}};
  report.gpus = {GpuStatus{}};
  GpuDetail held;
  held.processes_known = true;
  held.processes = {{4242, "alice", "python -m ipykernel", core::Bytes::GiB(30), false, 0.0, {}}};
  held.verdict.uuid = gpu;
  held.verdict.state = observe::GpuState::kHeldIdle;
  report.details = {{0, held}};
  ASSERT_TRUE(c.coordinator->HandleReport("a", report, c.Record()).ok());

  EXPECT_EQ(c.coordinator->AskHolder("GPU-9", kKeep, "alice", false).code(),
            core::StatusCode::kNotFound);
  const core::Status mallory = c.coordinator->AskHolder("GPU-1", kKeep, "mallory", false);
  EXPECT_EQ(mallory.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(mallory.message(), HasSubstr("only its holder's user (or root)"));
  EXPECT_THAT(c.coordinator->AskHolder("GPU-1", kUnpark, "alice", false).message(),
              HasSubstr("no holder is parked on GPU GPU-1"));
  ASSERT_TRUE(c.coordinator->AskHolder("GPU-1", kKeep, "alice", false).ok());
  ASSERT_TRUE(c.coordinator->AskHolder("GPU-1", kKeep, "alice", false).ok());  // asked twice

  // Parked: the holder is off the GPU, and its user may bring it back.
  held.processes.clear();
  held.verdict.state = observe::GpuState::kIdle;
  held.verdict.evidence.parking = observe::HolderParking{observe::HolderParking::Phase::kParked,
                                                         4242,
                                                         "alice",
                                                         core::Bytes::GiB(30),
                                                         c.clock.Now(),
                                                         {},
                                                         {}};
  report.inventory.reset();
  report.details = {{0, held}};
  auto reply = c.coordinator->HandleReport("a", report, c.Record());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->holders, (std::vector<HolderRequest>{{gpu, kKeep}}));  // once
  ASSERT_TRUE(c.coordinator->AskHolder("GPU-1", kUnpark, "alice", false).ok());
  EXPECT_TRUE(c.coordinator->AskHolder("GPU-1", kUnpark, "root", true).ok());
  reply = c.coordinator->HandleReport("a", report, c.Record());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->holders, (std::vector<HolderRequest>{{gpu, kUnpark}}));
  reply = c.coordinator->HandleReport("a", report, c.Record());
  EXPECT_TRUE(reply->holders.empty());

  // Giving up on a parked holder is root's alone, its user's included.
  const core::Status own = c.coordinator->AskHolder("GPU-1", kKill, "alice", false);
  EXPECT_EQ(own.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(own.message(), HasSubstr("only root (an admin) may give up"));
  ASSERT_TRUE(c.coordinator->AskHolder("GPU-1", kGiveUp, "root", true).ok());
  reply = c.coordinator->HandleReport("a", report, c.Record());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->holders, (std::vector<HolderRequest>{{gpu, kGiveUp}}));
}

// The agent hands what the coordinator passed on to its parker.
TEST(CoordinatorTest, AnAgentHandsKeepRequestsToItsParker) {
  Cluster c;
  Host& a = c.AddHost("a", Scenario("GPU-aaaaaaaa-0000-4000-8000-000000000000"));
  std::vector<HolderRequest> heard;
  a.node->OnHolderRequests(
      [&](const std::vector<HolderRequest>& asked, const Log&) { heard = asked; });
  c.Step();
  ASSERT_TRUE(
      c.coordinator->AskHolder("GPU-aaaaaaaa-0000-4000-8000-000000000000", kKeep, "root", true)
          .ok());
  c.Step();
  EXPECT_EQ(heard, (std::vector<HolderRequest>{
                       {core::GpuUuid("GPU-aaaaaaaa-0000-4000-8000-000000000000"), kKeep}}));
}

}  // namespace
}  // namespace gleaner::cluster
