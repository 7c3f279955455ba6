// The sampler end to end through the real NVML loader and the fake driver:
// verdicts flip as the scenario says, and history lands in SQLite.
#include "agent/sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "gpu/fake_backend.h"
#include "store/sqlite_store.h"
#include "testing/fake_nvml.h"

namespace gleaner::agent {
namespace {

using testing::FakeNvml;
using ::testing::HasSubstr;

// GPU 0 idle until a process appears at 400 s; GPU 1 held at 0 % by a
// process from the start.
constexpr const char* kScenario = R"({"gpus": [
  {"name": "A", "memory_total_mib": 80000,
   "timeline": [{"at_s": 0, "power_draw_w": 60},
                {"at_s": 400, "processes": [{"pid": 900, "used_memory_mib": 2000}]}]},
  {"name": "B", "memory_total_mib": 80000,
   "timeline": [{"at_s": 0, "memory_used_mib": 30000, "power_draw_w": 80,
                 "processes": [{"pid": 901, "used_memory_mib": 29000}]}]}]})";

class SamplerTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SamplerTest, ProcessAppearsAndMemoryHeldThroughTheFakeDriver) {
  FakeNvml fake(GetParam(), kScenario);
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  auto store = store::SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  ProcfsInspector inspector;
  Sampler sampler(**backend, inspector, store->get(), clock, {});

  observe::Verdict gpu0, gpu1;
  for (int t = 0; t <= 400; ++t) {
    fake.SetTime(t);
    auto pass = sampler.SampleOnce();
    ASSERT_TRUE(pass.ok());
    ASSERT_EQ(pass->verdicts.size(), 2u);
    gpu0 = pass->verdicts[0];
    gpu1 = pass->verdicts[1];
    if (t == 299) {
      EXPECT_EQ(gpu0.state, observe::GpuState::kUnknown);
      EXPECT_EQ(gpu1.state, observe::GpuState::kUnknown);
    }
    if (t == 300) {
      EXPECT_EQ(gpu0.state, observe::GpuState::kIdle) << gpu0.evidence.reason;
      EXPECT_EQ(gpu1.state, observe::GpuState::kHeldIdle) << gpu1.evidence.reason;
      EXPECT_THAT(gpu1.evidence.reason, HasSubstr("hold 28.3 GiB"));
    }
    if (t < 400) clock.Advance(core::Seconds(1));
  }
  // The process appeared at 400 s: Busy on that very sample.
  EXPECT_EQ(gpu0.state, observe::GpuState::kBusy);
  EXPECT_THAT(gpu0.evidence.reason, HasSubstr("new process"));
  EXPECT_EQ(gpu1.state, observe::GpuState::kHeldIdle);

  ASSERT_TRUE(sampler.Flush().ok());
  auto verdicts = (*store)->LatestVerdicts();
  ASSERT_TRUE(verdicts.ok());
  ASSERT_EQ(verdicts->size(), 2u);
  auto rollups =
      (*store)->Rollups(gpu0.uuid, core::FromUnixMicros(0), clock.Now() + core::Seconds(60));
  ASSERT_TRUE(rollups.ok());
  EXPECT_GE(rollups->size(), 6u);  // 401 s of samples
  int64_t samples = 0;
  for (const auto& r : *rollups) samples += r.samples;
  EXPECT_EQ(samples, 401);
  EXPECT_EQ(rollups->back().pids, (std::set<uint32_t>{900}));
  auto profiles = (*store)->Profiles("gpu");
  ASSERT_TRUE(profiles.ok());
  ASSERT_EQ(profiles->size(), 2u);
  // GPU 1: 300 s unknown, then held idle (in use) for 100 s.
  double busy = 0, observed = 0;
  for (int h = 0; h < observe::kHoursPerWeek; ++h) {
    busy += profiles->at(gpu1.uuid.str()).busy_s[static_cast<size_t>(h)];
    observed += profiles->at(gpu1.uuid.str()).observed_s[static_cast<size_t>(h)];
  }
  EXPECT_NEAR(observed, 400, 1e-6);
  EXPECT_NEAR(busy, 100, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(DriverEras, SamplerTest, ::testing::Values("modern", "legacy"));

TEST(SamplerRunTest, RunStopsOnRequestAndFlushes) {
  FakeNvml fake("modern", "demo");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  core::RealClock clock;
  ProcfsInspector inspector;
  SamplerOptions options;
  options.interval = core::Milliseconds(10);
  Sampler sampler(**backend, inspector, nullptr, clock, options);
  std::atomic<bool> stop{false};
  int passes = 0;
  sampler.Run(stop, [&](const HostPass& pass, const core::Status& s) {
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!pass.verdicts.empty()) ++passes;
    if (passes == 5) stop = true;
  });
  EXPECT_EQ(passes, 5);
  EXPECT_EQ(sampler.classifier().verdicts().size(), 8u);
}

// A policy applied while running judges the GPUs by its idle rules from
// the next pass: a GPU quiet for two minutes is idle at once under a
// one-minute window, and what was seen of it is kept.
TEST(SamplerReconfigureTest, NewIdleRulesTakeEffectAtTheNextPass) {
  FakeNvml fake("modern", kScenario);
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  ProcfsInspector inspector;
  Sampler sampler(**backend, inspector, nullptr, clock, {});
  observe::Verdict gpu0;
  for (int t = 0; t <= 120; ++t) {
    fake.SetTime(t);
    auto pass = sampler.SampleOnce();
    ASSERT_TRUE(pass.ok());
    gpu0 = pass->verdicts[0];
    clock.Advance(core::Seconds(1));
  }
  EXPECT_NE(gpu0.state, observe::GpuState::kIdle) << gpu0.evidence.reason;  // 5 minutes needed
  observe::IdleConfig sooner;
  sooner.idle_after = sooner.held_idle_after = core::Seconds(60);
  sampler.SetIdleConfig(sooner);
  EXPECT_EQ(sampler.classifier().config().idle_after, core::Seconds(60));
  EXPECT_GE(sampler.classifier().config().max_sample_gap, core::Seconds(3));  // 3 intervals
  fake.SetTime(121);
  auto pass = sampler.SampleOnce();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->verdicts[0].state, observe::GpuState::kIdle) << pass->verdicts[0].evidence.reason;
}

// News (a submit) does not wait for the interval: Wake brings the next
// pass now.
TEST(SamplerRunTest, WakeBringsTheNextPassBeforeTheInterval) {
  FakeNvml fake("modern", "demo");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  core::RealClock clock;
  ProcfsInspector inspector;
  SamplerOptions options;
  options.interval = core::Seconds(3600);
  Sampler sampler(**backend, inspector, nullptr, clock, options);
  std::atomic<bool> stop{false};
  std::atomic<int> passes{0};
  std::thread loop([&] {
    sampler.Run(stop, [&](const HostPass& pass, const core::Status&) {
      if (!pass.verdicts.empty()) ++passes;
    });
  });
  for (int i = 0; i < 500 && passes < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(passes, 1);
  sampler.Wake();
  for (int i = 0; i < 500 && passes < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(passes, 2);  // an hour early
  stop = true;
  loop.join();
}

// A daemon restarted on a real driver (which recalls nothing) goes on from
// the minutes it stored and the pauses it learned, instead of watching for
// five minutes again.
TEST(SamplerResumeTest, ARestartedSamplerJudgesAtOnceFromItsStoredMinutes) {
  FakeNvml fake("modern", kScenario);
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  auto store = store::SqliteStore::Open(":memory:");
  ASSERT_TRUE(store.ok());
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  ProcfsInspector inspector;
  SamplerOptions options;
  options.host = "node-a";
  {
    Sampler first(**backend, inspector, store->get(), clock, options);
    for (int t = 0; t <= 360; ++t) {
      fake.SetTime(t);
      ASSERT_TRUE(first.SampleOnce().ok());
      clock.Advance(core::Seconds(1));
    }
    ASSERT_TRUE(first.Flush().ok());
  }
  clock.Advance(core::Seconds(20));  // the restart
  fake.SetTime(380);

  Sampler fresh(**backend, inspector, nullptr, clock, options);
  auto watching = fresh.SampleOnce();
  ASSERT_TRUE(watching.ok());
  EXPECT_EQ(watching->verdicts[0].state, observe::GpuState::kUnknown);

  Sampler second(**backend, inspector, store->get(), clock, options);
  auto resumed = second.ResumeFromStore();
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->gpus, 2);
  EXPECT_GE(resumed->longest, core::Seconds(359));
  EXPECT_TRUE(resumed->pause_model);
  auto pass = second.SampleOnce();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->verdicts[0].state, observe::GpuState::kIdle) << pass->verdicts[0].evidence.reason;
  EXPECT_EQ(pass->verdicts[1].state, observe::GpuState::kHeldIdle)
      << pass->verdicts[1].evidence.reason;
  EXPECT_GE(pass->verdicts[0].evidence.observed_for, core::Seconds(379));

  // Another host's GPUs in the same store are not this host's history.
  options.host = "node-b";
  Sampler elsewhere(**backend, inspector, store->get(), clock, options);
  auto none = elsewhere.ResumeFromStore();
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->gpus, 0);
  EXPECT_FALSE(none->pause_model);
}

// A held GPU whose holder computes for a second every 400 s: once eight
// such spells have ended, its held-idle verdict says how much longer the
// quiet is expected to last.
TEST(SamplerForecastTest, HeldIdleVerdictsCarryTheQuietForecast) {
  std::string timeline = R"({"at_s": 0, "utilization_gpu_pct": 0, "memory_used_mib": 30000,
                             "processes": [{"pid": 901, "used_memory_mib": 29000}]})";
  for (int busy = 400; busy <= 3600; busy += 400) {
    timeline += ", {\"at_s\": " + std::to_string(busy) + ", \"utilization_gpu_pct\": 90}" +
                ", {\"at_s\": " + std::to_string(busy + 1) + ", \"utilization_gpu_pct\": 0}";
  }
  FakeNvml fake("modern", R"({"gpus": [{"name": "A", "memory_total_mib": 80000, "timeline": [)" +
                              timeline + "]}]}");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  ProcfsInspector inspector;
  Sampler sampler(**backend, inspector, nullptr, clock, {});
  observe::Verdict v;
  for (int t = 0; t <= 3950; ++t) {
    fake.SetTime(t);
    auto pass = sampler.SampleOnce();
    ASSERT_TRUE(pass.ok());
    v = pass->verdicts[0];
    if (t == 3550) {
      EXPECT_EQ(v.state, observe::GpuState::kHeldIdle);
      EXPECT_FALSE(v.evidence.quiet_forecast.has_value());  // seven spells so far
    }
    clock.Advance(core::Seconds(1));
  }
  ASSERT_EQ(v.state, observe::GpuState::kHeldIdle) << v.evidence.reason;
  ASSERT_TRUE(v.evidence.quiet_forecast.has_value());
  EXPECT_TRUE(v.evidence.quiet_forecast->own);
  EXPECT_EQ(v.evidence.quiet_forecast->spells, 8);
  EXPECT_EQ(v.evidence.quiet_forecast->p50, core::Seconds(400 - 350));
  // Under a minute more is not worth lending, whoever asks.
  EXPECT_THAT(v.evidence.lend_blocked, ::testing::HasSubstr("expected to last only 50s at p80"));
  EXPECT_THAT(v.evidence.reason, ::testing::HasSubstr("; not lent: its quiet is expected"));
}

// The demo starts with its past; then its empty GPUs (3 and 6: nothing on
// them, 0 %) stay idle while GPU 5's sweep comes and goes beside them.
TEST(SamplerRecallTest, VerdictsStartWithTheScenariosPastAndEmptyGpusStayIdle) {
  core::ManualClock clock(core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000));
  auto scenario = gpu::LoadScenario("demo");
  ASSERT_TRUE(scenario.ok());
  auto backend = gpu::FakeBackend::Create(*scenario, clock);
  ASSERT_TRUE(backend.ok());
  ProcfsInspector procfs;
  ScenarioProcessInspector inspector(*scenario, procfs);
  Sampler sampler(**backend, inspector, nullptr, clock, {});
  EXPECT_EQ(sampler.Recall(core::Seconds(300)), core::Seconds(300));
  auto pass = sampler.SampleOnce();
  ASSERT_TRUE(pass.ok());
  // GPUs 3 and 6 were quiet through the recalled 5 minutes; GPU 5's sweep
  // left 180 s before the start, too recently; GPU 2's process holds memory.
  EXPECT_EQ(pass->verdicts[3].state, observe::GpuState::kIdle) << pass->verdicts[3].evidence.reason;
  EXPECT_EQ(pass->verdicts[6].state, observe::GpuState::kIdle);
  EXPECT_NE(pass->verdicts[5].state, observe::GpuState::kIdle);
  EXPECT_EQ(pass->verdicts[2].state, observe::GpuState::kHeldIdle);
  // Forty minutes of passes 10 s apart. Before: GPU 6 read busy for ten
  // minutes once GPU 5's first pause had ended ("only 33% of 1 similar
  // pauses stayed quiet").
  bool gpu5_woke = false;
  for (int i = 0; i < 6 * 40; ++i) {
    clock.Advance(core::Seconds(10));
    auto p = sampler.SampleOnce();
    ASSERT_TRUE(p.ok());
    gpu5_woke = gpu5_woke || p->verdicts[5].state == observe::GpuState::kBusy;
    for (size_t gpu : {size_t{3}, size_t{6}}) {
      EXPECT_EQ(p->verdicts[gpu].state, observe::GpuState::kIdle)
          << "GPU " << gpu << " at pass " << i << ": " << p->verdicts[gpu].evidence.reason;
    }
  }
  EXPECT_TRUE(gpu5_woke);
}

TEST(SamplerRecallTest, ARealDriverHasNoPastToRecall) {
  FakeNvml fake("modern", "demo");
  auto backend = fake.Open();
  ASSERT_TRUE(backend.ok());
  core::RealClock clock;
  ProcfsInspector inspector;
  Sampler sampler(**backend, inspector, nullptr, clock, {});
  EXPECT_EQ(sampler.Recall(core::Seconds(300)), core::Duration{});
  auto pass = sampler.SampleOnce();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->verdicts[3].state, observe::GpuState::kUnknown);
}

}  // namespace
}  // namespace gleaner::agent
