// A classifier resumed from the minutes a previous run stored judges as the
// previous run would have, within a minute's rounding, instead of watching
// afresh; and it resumes only from history it can trust.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "observe/idle_classifier.h"
#include "observe/minute_rollup.h"
#include "observe/verdict_json.h"

namespace gleaner::observe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const core::GpuUuid kGpu("GPU-resume-0");
const core::TimePoint kStart = core::FromUnixMicros(1'700'000'017'000'000);

ObservedProcess Proc(uint32_t pid, bool gleaner_job = false) {
  ObservedProcess p{pid, "alice", "python x.py", core::Bytes::GiB(30), false, {}, {}};
  p.gleaner_job = gleaner_job;
  return p;
}

// The first run: samples a second apart, judged and rolled up into the
// minutes it would have stored when stopped.
class FirstRun {
 public:
  explicit FirstRun(IdleConfig config = {})
      : classifier_(config), rollups_(config.max_sample_gap) {}

  void Hold(double util, int seconds, const std::vector<ObservedProcess>& processes = {}) {
    for (int i = 0; i < seconds; ++i) {
      now_ += core::Seconds(1);
      const GpuSample s = Sample(now_, util, processes);
      const Verdict& v = classifier_.Observe(s);
      for (MinuteRollup& m : rollups_.Add(s, v)) minutes_.push_back(std::move(m));
    }
  }
  // Stops, as a daemon does on SIGTERM: the open minute is stored too.
  std::vector<MinuteRollup> Stop() {
    for (MinuteRollup& m : rollups_.Flush()) minutes_.push_back(std::move(m));
    return minutes_;
  }
  // Killed: the open minute is lost.
  std::vector<MinuteRollup> Kill() const { return minutes_; }
  core::TimePoint now() const { return now_; }
  IdleClassifier& classifier() { return classifier_; }

  static GpuSample Sample(core::TimePoint at, double util,
                          const std::vector<ObservedProcess>& processes = {}) {
    GpuSample s;
    s.at = at;
    s.uuid = kGpu;
    s.utilization_pct = util;
    s.power_w = 60;
    s.power_limit_w = 700;
    s.processes_known = true;
    s.processes = processes;
    return s;
  }

 private:
  IdleClassifier classifier_;
  MinuteRollupBuilder rollups_;
  std::vector<MinuteRollup> minutes_;
  core::TimePoint now_ = kStart;
};

TEST(ResumeTest, AQuietGpuIsIdleAtOnceAfterARestart) {
  FirstRun run;
  run.Hold(0, 600);
  const std::vector<MinuteRollup> minutes = run.Stop();
  const core::TimePoint restart = run.now() + core::Seconds(20);

  IdleClassifier resumed({});
  const core::Duration history = resumed.Resume(kGpu, minutes, restart);
  EXPECT_GE(history, core::Seconds(540));
  EXPECT_LE(history, core::Seconds(600));
  const Verdict& v = resumed.Observe(FirstRun::Sample(restart + core::Seconds(1), 0));
  EXPECT_EQ(v.state, GpuState::kIdle) << v.evidence.reason;
  EXPECT_GE(v.evidence.quiet_for, core::Seconds(560));
  EXPECT_GE(v.evidence.observed_for, core::Seconds(560));

  // Without the history, the same sample starts the watch.
  IdleClassifier fresh({});
  EXPECT_THAT(fresh.Observe(FirstRun::Sample(restart + core::Seconds(1), 0)).evidence.reason,
              HasSubstr("watching"));
}

TEST(ResumeTest, AHolderIsHeldIdleAtOnceAndNotTakenForANewProcess) {
  FirstRun run;
  run.Hold(0, 400, {Proc(900)});
  const std::vector<MinuteRollup> minutes = run.Kill();  // the open minute is lost
  const core::TimePoint restart = run.now() + core::Seconds(30);

  IdleClassifier resumed({});
  ASSERT_GT(resumed.Resume(kGpu, minutes, restart), core::Duration{});
  const Verdict& v = resumed.Observe(FirstRun::Sample(restart, 0, {Proc(900)}));
  EXPECT_EQ(v.state, GpuState::kHeldIdle) << v.evidence.reason;
}

TEST(ResumeTest, AProcessThatCameWhileTheDaemonWasDownIsActivity) {
  FirstRun run;
  run.Hold(0, 400, {Proc(900)});
  const std::vector<MinuteRollup> minutes = run.Stop();
  IdleClassifier resumed({});
  ASSERT_GT(resumed.Resume(kGpu, minutes, run.now() + core::Seconds(10)), core::Duration{});
  const Verdict& v =
      resumed.Observe(FirstRun::Sample(run.now() + core::Seconds(11), 0, {Proc(900), Proc(901)}));
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_THAT(v.evidence.reason, HasSubstr("new process"));
}

TEST(ResumeTest, RecentActivityKeepsItBusyUntilTheWindowHasPassed) {
  FirstRun run;
  run.Hold(0, 600);
  run.Hold(80, 30);  // the owner computed just before the restart
  run.Hold(0, 90);
  const std::vector<MinuteRollup> minutes = run.Stop();
  IdleClassifier resumed({});
  ASSERT_GT(resumed.Resume(kGpu, minutes, run.now() + core::Seconds(10)), core::Duration{});
  core::TimePoint t = run.now() + core::Seconds(10);
  const Verdict first = resumed.Observe(FirstRun::Sample(t, 0));
  EXPECT_EQ(first.state, GpuState::kBusy) << first.evidence.reason;
  EXPECT_THAT(first.evidence.reason, HasSubstr("idle after 5m00s"));
  EXPECT_GE(first.evidence.max_utilization_pct_in_window, 80);
  // The busy minute's end is the last activity, at most a minute late.
  Verdict v;
  for (int i = 0; i < 300 && v.state != GpuState::kIdle; ++i) {
    t += core::Seconds(1);
    v = resumed.Observe(FirstRun::Sample(t, 0));
  }
  EXPECT_EQ(v.state, GpuState::kIdle);
  const core::Duration waited = t - (run.now() + core::Seconds(10));
  // Quiet for 90 s before the stop, 10 s across it: 200 s more would do,
  // 260 s at the most (the busy minute's end may be a minute late).
  EXPECT_GE(waited, core::Seconds(200 - 1));
  EXPECT_LE(waited, core::Seconds(260 + 1));
}

TEST(ResumeTest, AStopLongerThanTheRestartGapStartsTheWatchAfresh) {
  FirstRun run;
  run.Hold(0, 600);
  const std::vector<MinuteRollup> minutes = run.Stop();
  const core::TimePoint late = run.now() + core::Seconds(151);
  IdleClassifier resumed({});
  EXPECT_EQ(resumed.Resume(kGpu, minutes, late), core::Duration{});
  EXPECT_THAT(resumed.Observe(FirstRun::Sample(late, 0)).evidence.reason, HasSubstr("watching"));
  // And a sample that arrives later than the gap allows, after a resume.
  IdleClassifier slow({});
  ASSERT_GT(slow.Resume(kGpu, minutes, run.now() + core::Seconds(5)), core::Duration{});
  EXPECT_THAT(slow.Observe(FirstRun::Sample(late, 0)).evidence.reason, HasSubstr("watching"));
}

TEST(ResumeTest, OnlyTheUnbrokenRunOfMinutesAtTheEndCounts) {
  FirstRun run;
  run.Hold(0, 600);
  std::vector<MinuteRollup> minutes = run.Stop();
  // A gap ten minutes ago: a minute missing from the middle.
  const core::TimePoint cut = minutes[minutes.size() - 4].minute;
  minutes.erase(minutes.end() - 4);
  IdleClassifier resumed({});
  const core::Duration history = resumed.Resume(kGpu, minutes, run.now() + core::Seconds(5));
  EXPECT_EQ(history, run.now() - (cut + core::Seconds(60)));
  // Less than the 5 minute window: watched until it is whole.
  const Verdict& v = resumed.Observe(FirstRun::Sample(run.now() + core::Seconds(6), 0));
  EXPECT_EQ(v.state, GpuState::kUnknown);
  EXPECT_THAT(v.evidence.reason, HasSubstr("watching: 2m"));
}

TEST(ResumeTest, ARunMayBeginLateInItsFirstMinute) {
  FirstRun run;
  run.Hold(0, 40);  // from 38 s into a minute to 17 s into the next
  const std::vector<MinuteRollup> minutes = run.Stop();
  ASSERT_EQ(minutes.size(), 2u);
  IdleClassifier resumed({});
  EXPECT_EQ(resumed.Resume(kGpu, minutes, run.now() + core::Seconds(5)), core::Seconds(39));
}

TEST(ResumeTest, ARunOfOneMinuteIsTakenAtItsShortest) {
  FirstRun run;
  run.Hold(0, 20);  // 20 samples inside one minute; where in it, the minute does not say
  const std::vector<MinuteRollup> minutes = run.Stop();
  ASSERT_EQ(minutes.size(), 1u);
  IdleClassifier resumed({});
  ASSERT_GT(resumed.Resume(kGpu, minutes, run.now() + core::Seconds(5)), core::Duration{});
  const Verdict& v = resumed.Observe(FirstRun::Sample(run.now() + core::Seconds(6), 0));
  EXPECT_GE(v.evidence.observed_for, core::Seconds(19));
  EXPECT_LE(v.evidence.observed_for, core::Seconds(25));  // 19 s of samples, 6 s since
}

TEST(ResumeTest, MinutesOfGleanersOwnJobAreNotTheOwnersActivity) {
  FirstRun run;
  run.Hold(0, 400);
  run.Hold(95, 240, {Proc(7, /*gleaner_job=*/true)});
  run.Hold(0, 10);
  const std::vector<MinuteRollup> minutes = run.Stop();
  IdleClassifier resumed({});
  ASSERT_GT(resumed.Resume(kGpu, minutes, run.now() + core::Seconds(5)), core::Duration{});
  const Verdict& v = resumed.Observe(FirstRun::Sample(run.now() + core::Seconds(6), 0));
  EXPECT_EQ(v.state, GpuState::kIdle) << v.evidence.reason;
  EXPECT_THAT(v.evidence.reason, Not(HasSubstr("watching")));
}

TEST(ResumeTest, AGpuAlreadySampledKeepsWhatItHas) {
  FirstRun run;
  run.Hold(0, 600);
  const std::vector<MinuteRollup> minutes = run.Stop();
  IdleClassifier c({});
  c.Observe(FirstRun::Sample(run.now() + core::Seconds(5), 0));
  EXPECT_EQ(c.Resume(kGpu, minutes, run.now() + core::Seconds(6)), core::Duration{});
  EXPECT_THAT(c.Observe(FirstRun::Sample(run.now() + core::Seconds(7), 0)).evidence.reason,
              HasSubstr("watching"));
}

TEST(ResumeTest, ThePauseModelGoesOnFromItsCells) {
  FirstRun run;
  // Quiet spells that end: the model learns from them.
  for (int i = 0; i < 6; ++i) {
    run.Hold(0, 800);
    run.Hold(90, 60);
  }
  const QuietSpellModel& learned = run.classifier().model();
  int64_t pauses = 0;
  for (const QuietSpellModel::Count& c : learned.cells()) pauses += c.total;
  EXPECT_GT(pauses, 0);
  const QuietSpellModel copy(learned.cells());
  const QuietSpellModel::Features f{core::Seconds(400), core::Seconds(60), true};
  EXPECT_EQ(copy.Predict(f).similar, learned.Predict(f).similar);
  EXPECT_EQ(copy.Predict(f).probability, learned.Predict(f).probability);
  IdleClassifier resumed({});
  resumed.RestoreModel(copy);
  EXPECT_EQ(resumed.model().cells(), learned.cells());
}

TEST(ResumeTest, AStoredPauseModelRoundTripsAndADamagedOneIsRefused) {
  QuietSpellModel m;
  const QuietSpellModel::Features quiet{core::Seconds(900), {}, true};
  m.Learn(quiet, true);
  m.Learn(quiet, true, false);  // the same spell's next moment
  auto back = PauseModelFromJson(PauseModelToJson(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->cells(), m.cells());
  EXPECT_EQ(back->Predict(quiet).pauses, 1);
  // One kept before spells were counted: each moment its own.
  nlohmann::json pairs = PauseModelToJson(m);
  for (nlohmann::json& cell : pairs) cell.erase(2);
  auto old = PauseModelFromJson(pairs);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->Predict(quiet).pauses, 2);

  nlohmann::json bad = PauseModelToJson(m);
  bad[3] = {5, 4};  // more stayed quiet than were seen
  EXPECT_THAT(PauseModelFromJson(bad).status().message(), HasSubstr("bucket 3 is [5,4]"));
  bad[3] = {-1, 4};
  EXPECT_FALSE(PauseModelFromJson(bad).ok());
  bad[3] = {1.5, 4};
  EXPECT_FALSE(PauseModelFromJson(bad).ok());
  bad[3] = {1, 4, 5};  // more spells than moments
  EXPECT_FALSE(PauseModelFromJson(bad).ok());
  bad.erase(3);
  EXPECT_THAT(PauseModelFromJson(bad).status().message(), HasSubstr("has 72"));
  EXPECT_FALSE(PauseModelFromJson(nlohmann::json::object()).ok());
}

}  // namespace
}  // namespace gleaner::observe
