#include "observe/idle_classifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace gleaner::observe {
namespace {

using ::testing::HasSubstr;

const core::GpuUuid kGpu("GPU-test-0");
const core::TimePoint kStart = core::FromUnixMicros(1'700'000'000'000'000);

// Drives one GPU with one sample a second.
class Driver {
 public:
  explicit Driver(IdleConfig config = {}) : classifier_(std::move(config)) {}

  Verdict Step(double util, std::vector<ObservedProcess> processes = {},
               core::Duration dt = core::Seconds(1)) {
    now_ += dt;
    GpuSample s;
    s.at = now_;
    s.uuid = kGpu;
    s.utilization_pct = util;
    s.memory_used = core::Bytes::GiB(1);
    s.processes_known = true;
    s.processes = std::move(processes);
    s.lent_to_job = lent_to_job_;
    return classifier_.Observe(s);
  }
  // The agent's word that a job holds the GPU, from the next step on.
  void Lend(std::optional<int64_t> job) { lent_to_job_ = job; }
  // `seconds` samples at `util`; returns the last verdict.
  Verdict Hold(double util, int seconds, const std::vector<ObservedProcess>& processes = {}) {
    Verdict v;
    for (int i = 0; i < seconds; ++i) v = Step(util, processes);
    return v;
  }
  IdleClassifier& classifier() { return classifier_; }
  core::TimePoint now() const { return now_; }

 private:
  IdleClassifier classifier_;
  core::TimePoint now_ = kStart;
  std::optional<int64_t> lent_to_job_;
};

ObservedProcess Proc(uint32_t pid, const char* user = "alice", const char* command = "python x.py",
                     core::Bytes memory = core::Bytes::GiB(30)) {
  return {pid, user, command, memory, false, {}, {}};
}

TEST(IdleClassifierTest, UnknownUntilEnoughDataThenIdle) {
  Driver d;
  Verdict v = d.Step(0);
  EXPECT_EQ(v.state, GpuState::kUnknown);
  EXPECT_THAT(v.evidence.reason, HasSubstr("watching"));
  v = d.Hold(0, 298);
  EXPECT_EQ(v.state, GpuState::kUnknown);
  v = d.Hold(0, 2);  // 300 s of quiet: the full window, no history yet
  EXPECT_EQ(v.state, GpuState::kIdle);
  EXPECT_EQ(v.since, d.now());
  ASSERT_TRUE(v.evidence.confidence.has_value());
  EXPECT_DOUBLE_EQ(*v.evidence.confidence, 0.5);  // no opinion yet
  EXPECT_EQ(v.evidence.quiet_for, core::Seconds(300));
  EXPECT_THAT(v.evidence.reason,
              HasSubstr("no processes, under 10% for 5m00s; no similar pauses seen yet"));
}

TEST(IdleClassifierTest, BusyAtOnceWhenUtilizationRises) {
  Driver d;
  d.Hold(0, 400);
  ASSERT_EQ(d.Step(0).state, GpuState::kIdle);
  Verdict v = d.Step(35);
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_EQ(v.since, d.now());
  EXPECT_THAT(v.evidence.reason, HasSubstr("utilization 35% at or above 10%"));
  EXPECT_EQ(v.evidence.quiet_for, core::Duration{});
}

TEST(IdleClassifierTest, ANewProcessMakesItBusyAtOnceEvenAtZero) {
  Driver d;
  d.Hold(0, 400);
  ASSERT_EQ(d.Step(0).state, GpuState::kIdle);
  Verdict v = d.Step(0, {Proc(4242)});
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_THAT(v.evidence.reason, HasSubstr("new process"));
  EXPECT_EQ(v.evidence.processes, 1);
}

TEST(IdleClassifierTest, MemoryHeldAtZeroBecomesHeldIdleAfterTheWindow) {
  Driver d;
  d.Hold(80, 60, {Proc(7)});
  Verdict v = d.Hold(0, 299, {Proc(7)});
  EXPECT_EQ(v.state, GpuState::kBusy);  // a pause, not yet held idle
  v = d.Step(0, {Proc(7)});
  EXPECT_EQ(v.state, GpuState::kHeldIdle);
  EXPECT_EQ(v.evidence.process_memory, core::Bytes::GiB(30));
  EXPECT_THAT(v.evidence.reason, HasSubstr("1 process(es) hold 30.0 GiB at under 10% for 5m00s"));
  EXPECT_EQ(v.evidence.max_utilization_pct_in_window, 0);
}

TEST(IdleClassifierTest, AShortQuietPhaseOfABusyJobIsNotIdle) {
  Driver d;
  for (int cycle = 0; cycle < 3; ++cycle) {
    EXPECT_EQ(d.Hold(95, 120).state, GpuState::kBusy);
    // A 90-second data-loading phase at 0 %, no processes visible: too short.
    EXPECT_EQ(d.Hold(0, 90).state, GpuState::kBusy) << "cycle " << cycle;
  }
}

TEST(IdleClassifierTest, HistoryOfShortPausesKeepsAGpuBusyLongerThanTheWindow) {
  IdleConfig config;
  config.trusted_pauses = 5;
  Driver d(config);
  // A GPU that pauses 6 minutes and then bursts, again and again: pauses
  // past 5 minutes never last 10 more, and the model learns it.
  for (int cycle = 0; cycle < 40; ++cycle) {
    d.Hold(90, 30);
    d.Hold(0, 360);
  }
  d.Hold(90, 30);
  Verdict v = d.Hold(0, 330);
  EXPECT_EQ(v.state, GpuState::kBusy);
  ASSERT_TRUE(v.evidence.confidence.has_value());
  EXPECT_LT(*v.evidence.confidence, 0.1);
  EXPECT_GE(v.evidence.similar_pauses, 30);  // spells, one a cycle
  EXPECT_THAT(v.evidence.reason, HasSubstr("but only"));
}

TEST(IdleClassifierTest, TrustedHistoryOfLongPausesCallsIdleEarlier) {
  IdleConfig config;
  config.trusted_pauses = 5;
  Driver d(config);
  for (int cycle = 0; cycle < 10; ++cycle) {
    d.Hold(90, 30);
    d.Hold(0, 1800);  // long, real idle spells
  }
  d.Hold(90, 30);
  Verdict v = d.Hold(0, 150);  // past idle_after_with_history (2 min), short of 5 min
  EXPECT_EQ(v.state, GpuState::kIdle);
  EXPECT_GT(*v.evidence.confidence, 0.9);
}

TEST(IdleClassifierTest, AGapRestartsTheTimersAndNeverCountsAsIdle) {
  Driver d;
  d.Hold(0, 200);
  Verdict v = d.Step(0, {}, core::Seconds(3600));  // an hour with no data
  EXPECT_EQ(v.state, GpuState::kUnknown);
  EXPECT_EQ(v.evidence.observed_for, core::Duration{});
  EXPECT_EQ(d.Hold(0, 298).state, GpuState::kUnknown);
  EXPECT_EQ(d.Hold(0, 2).state, GpuState::kIdle);
}

TEST(IdleClassifierTest, OutOfOrderAndDuplicateSamplesAreIgnored) {
  Driver d;
  d.Hold(0, 10);
  GpuSample late;
  late.at = d.now() - core::Seconds(5);
  late.uuid = kGpu;
  late.utilization_pct = 100;
  late.processes_known = true;
  const Verdict before = d.classifier().verdicts().at(kGpu);
  EXPECT_EQ(d.classifier().Observe(late), before);
  late.at = d.now();  // duplicate time
  EXPECT_EQ(d.classifier().Observe(late), before);
  EXPECT_EQ(d.classifier().ignored_samples(), 2);
}

TEST(IdleClassifierTest, NaNUtilizationIsNoReading) {
  Driver d;
  d.Hold(0, 400);
  Verdict v = d.Step(std::nan(""));
  EXPECT_EQ(v.state, GpuState::kUnknown);
  EXPECT_EQ(v.evidence.reason, "no utilization reading");
  EXPECT_EQ(d.Hold(0, 10).state, GpuState::kUnknown);  // timers restarted
}

TEST(IdleClassifierTest, UnhealthyLostOrHot) {
  Driver d;
  GpuSample s;
  s.at = kStart;
  s.uuid = kGpu;
  s.healthy = false;
  s.health_detail = "GPU_IS_LOST";
  Verdict v = d.classifier().Observe(s);
  EXPECT_EQ(v.state, GpuState::kUnhealthy);
  EXPECT_THAT(v.evidence.reason, HasSubstr("GPU_IS_LOST"));
  s.at += core::Seconds(1);
  s.healthy = true;
  s.utilization_pct = 0;
  s.temperature_c = 97;
  v = d.classifier().Observe(s);
  EXPECT_EQ(v.state, GpuState::kUnhealthy);
  EXPECT_THAT(v.evidence.reason, HasSubstr("temperature 97°C above 90°C"));
}

TEST(IdleClassifierTest, ProtectedReservedAndHarvested) {
  IdleConfig config;
  config.protected_users = {"bob"};
  config.protected_commands = {"sshd"};
  config.reserved_gpus = {core::GpuUuid("GPU-test-0")};
  Driver d(config);
  EXPECT_EQ(d.Hold(0, 400).state, GpuState::kReserved);
  Verdict v = d.Step(0, {Proc(1, "bob")});
  EXPECT_EQ(v.state, GpuState::kProtected);
  EXPECT_THAT(v.evidence.reason, HasSubstr("protected user bob"));
  v = d.Step(0, {Proc(2, "carol", "/usr/sbin/sshd -D")});
  EXPECT_EQ(v.state, GpuState::kProtected);
  ObservedProcess job = Proc(3, "carol", "python sweep.py");
  job.gleaner_job = true;
  EXPECT_EQ(d.Step(0, {job}).state, GpuState::kHarvested);

  IdleConfig protect_gpu;
  protect_gpu.protected_gpus = {kGpu};
  Driver p(protect_gpu);
  EXPECT_EQ(p.Hold(0, 400).state, GpuState::kProtected);
}

// A job that opened no CUDA context shows no process: the agent's word
// that it holds the GPU makes it read as lent, with the job.
TEST(IdleClassifierTest, AGpuLentToAJobWithoutAProcessReadsAsLent) {
  Driver d;
  EXPECT_EQ(d.Hold(0, 301).state, GpuState::kIdle);
  d.Lend(1);
  Verdict v = d.Step(0);
  EXPECT_EQ(v.state, GpuState::kHarvested);
  EXPECT_EQ(v.evidence.reason, "lent to gleaner job 1");
  EXPECT_EQ(v.evidence.lent_to_job, 1);
  ObservedProcess job = Proc(7, "carol", "python sweep.py");
  job.gleaner_job = true;
  EXPECT_EQ(d.Step(0, {job}).evidence.reason, "gleaner job 1's process 7 runs on it");
  // The owner's process beside it is their return, whatever the job shows.
  v = d.Step(0, {Proc(8, "alice")});
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_THAT(v.evidence.reason,
              HasSubstr("owner returned: process 8 of alice beside gleaner job 1"));
  EXPECT_EQ(v.evidence.foreign_processes, 1);
  d.Lend(std::nullopt);
  EXPECT_EQ(d.Step(0).evidence.lent_to_job, std::nullopt);
}

TEST(IdleClassifierTest, AGleanerJobsOwnActivityDoesNotEndTheOwnersQuietSpell) {
  Driver d;
  EXPECT_EQ(d.Hold(0, 301).state, GpuState::kIdle);
  ObservedProcess job = Proc(7, "carol", "python sweep.py");
  job.gleaner_job = true;
  EXPECT_EQ(d.Hold(95, 600, {job}).state, GpuState::kHarvested);
  // The job leaves: its 10 minutes at 95 % were not the owner's, so the GPU
  // is idle again at once instead of being watched for another window.
  Verdict v = d.Step(0);
  EXPECT_EQ(v.state, GpuState::kIdle);
  EXPECT_GE(v.evidence.quiet_for, core::Seconds(900));
  // The owner coming back beside a job is activity, at once.
  d.Step(95, {job});
  v = d.Step(60, {job, Proc(8, "alice")});
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_THAT(v.evidence.reason, HasSubstr("owner returned"));
  EXPECT_EQ(d.Step(0).state, GpuState::kBusy);  // a pause now, not idle
}

TEST(IdleClassifierTest, PowerWellAboveTheIdleBaselineIsActivity) {
  Driver d;
  GpuSample s;
  s.uuid = kGpu;
  s.processes_known = true;
  s.power_limit_w = 700;
  s.utilization_pct = 0;
  s.at = kStart;
  for (int i = 0; i < 400; ++i) {
    s.at += core::Seconds(1);
    s.power_w = 70;
    d.classifier().Observe(s);
  }
  ASSERT_EQ(d.classifier().verdicts().at(kGpu).state, GpuState::kIdle);
  s.at += core::Seconds(1);
  s.power_w = 250;  // copies or data loading at 0 % kernel time
  Verdict v = d.classifier().Observe(s);
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_THAT(v.evidence.reason, HasSubstr("power 250 W, well above its idle 70 W"));
}

TEST(IdleClassifierTest, GpusAreJudgedSeparately) {
  IdleClassifier c({});
  for (int i = 0; i < 400; ++i) {
    for (int g = 0; g < 2; ++g) {
      GpuSample s;
      s.at = kStart + core::Seconds(i);
      s.uuid = core::GpuUuid("GPU-" + std::to_string(g));
      s.utilization_pct = g == 0 ? 0 : 60;
      s.processes_known = true;
      c.Observe(s);
    }
  }
  EXPECT_EQ(c.verdicts().at(core::GpuUuid("GPU-0")).state, GpuState::kIdle);
  EXPECT_EQ(c.verdicts().at(core::GpuUuid("GPU-1")).state, GpuState::kBusy);
}

// Two empty GPUs quiet from the start: when one wakes after 8 minutes, the
// many moments of its one pause that ended are no reason to call the
// other, still empty, busy; three such pauses are.
TEST(IdleClassifierTest, OneOtherGpusPauseThatEndedDoesNotMakeAnEmptyGpuBusy) {
  IdleClassifier c({});
  int at = 0;
  const auto run = [&](int seconds, double other_util) {
    for (const int end = at + seconds; at < end; ++at) {
      for (int g = 0; g < 2; ++g) {
        GpuSample s;
        s.at = kStart + core::Seconds(at);
        s.uuid = core::GpuUuid("GPU-" + std::to_string(g));
        s.utilization_pct = g == 0 ? 0 : other_util;
        s.processes_known = true;
        c.Observe(s);
      }
    }
    return c.verdicts().at(core::GpuUuid("GPU-0"));
  };
  run(480, 0);
  ASSERT_EQ(c.verdicts().at(core::GpuUuid("GPU-0")).state, GpuState::kIdle);
  Verdict v = run(60, 90);
  EXPECT_EQ(v.state, GpuState::kIdle) << v.evidence.reason;
  EXPECT_EQ(v.evidence.similar_pauses, 1);
  EXPECT_THAT(v.evidence.reason,
              HasSubstr("of 1 similar pauses stayed quiet 10m00s more (too few to go by)"));
}

}  // namespace
}  // namespace gleaner::observe
