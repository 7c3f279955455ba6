// Minute roll-ups, usage profiles, alert rules and verdict JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "observe/alerts.h"
#include "observe/idle_classifier.h"
#include "observe/lending.h"
#include "observe/minute_rollup.h"
#include "observe/usage_profile.h"
#include "observe/verdict_json.h"

namespace gleaner::observe {
namespace {

using ::testing::HasSubstr;

// Monday 2026-11-30 00:00:00 UTC.
const core::TimePoint kMonday = core::FromUnixMicros(int64_t{1'795'996'800} * 1'000'000);

GpuSample Sample(int second, double util, std::vector<ObservedProcess> procs = {}) {
  GpuSample s;
  s.at = kMonday + core::Seconds(second);
  s.uuid = core::GpuUuid("GPU-a");
  s.utilization_pct = util;
  s.memory_used = core::Bytes::GiB(static_cast<uint64_t>(second % 7));
  s.power_w = 100 + second % 3;
  s.processes_known = true;
  s.processes = std::move(procs);
  return s;
}

Verdict V(GpuState state) {
  Verdict v;
  v.uuid = core::GpuUuid("GPU-a");
  v.state = state;
  return v;
}

TEST(TimeTest, MinuteAndHourOfWeek) {
  EXPECT_EQ(MinuteOf(kMonday + core::Seconds(119)), kMonday + core::Seconds(60));
  EXPECT_EQ(HourOfWeek(kMonday), 0);
  EXPECT_EQ(HourOfWeek(kMonday + core::Seconds(3600 * 25 + 5)), 25);  // Tuesday 01:00
  EXPECT_EQ(HourOfWeek(kMonday - core::Seconds(1)), 167);             // Sunday 23:59
}

TEST(MinuteRollupTest, SummarisesEachMinuteAndCreditsStates) {
  MinuteRollupBuilder b(core::Seconds(5));
  std::vector<MinuteRollup> done;
  for (int s = 0; s < 60; ++s) {
    auto out =
        b.Add(Sample(s, s < 30 ? 80 : 0, {{7, "alice", "x", core::Bytes::GiB(1), false, {}, {}}}),
              V(s < 30 ? GpuState::kBusy : GpuState::kIdle));
    EXPECT_TRUE(out.empty());
  }
  done = b.Add(Sample(60, 0), V(GpuState::kIdle));
  ASSERT_EQ(done.size(), 1u);
  const MinuteRollup& r = done[0];
  EXPECT_EQ(r.minute, kMonday);
  EXPECT_EQ(r.samples, 60);
  EXPECT_DOUBLE_EQ(r.utilization_min_pct, 0);
  EXPECT_DOUBLE_EQ(r.utilization_max_pct, 80);
  EXPECT_DOUBLE_EQ(r.utilization_mean_pct, 40);
  EXPECT_EQ(r.memory_used_max, core::Bytes::GiB(6));
  ASSERT_TRUE(r.power_mean_w.has_value());
  EXPECT_NEAR(*r.power_mean_w, 101, 0.05);
  EXPECT_EQ(r.pids, (std::set<uint32_t>{7}));
  EXPECT_EQ(r.users, (std::set<std::string>{"alice"}));
  EXPECT_EQ(r.state, GpuState::kIdle);
  EXPECT_EQ(r.busy, core::Seconds(30));  // seconds 0..30 credited to Busy
  EXPECT_EQ(r.idle, core::Seconds(30));  // 30..60: the last second reaches the boundary
  EXPECT_EQ(r.observed, core::Seconds(60));
}

TEST(MinuteRollupTest, HeldIdleAndHarvestedTimeAndJobUsersAreKeptApart) {
  MinuteRollupBuilder b(core::Seconds(5));
  // 0..20 s alice holds memory without computing; 20..60 s bob's gleaner job runs.
  for (int s = 0; s < 60; ++s) {
    const bool job = s >= 20;
    b.Add(Sample(s, job ? 90 : 0, {{job ? 9u : 7u, job ? "bob" : "alice", "x", {}, job, {}, {}}}),
          V(job ? GpuState::kHarvested : GpuState::kHeldIdle));
  }
  auto done = b.Add(Sample(60, 0), V(GpuState::kIdle));
  ASSERT_EQ(done.size(), 1u);
  const MinuteRollup& r = done[0];
  EXPECT_EQ(r.users, (std::set<std::string>{"alice"}));
  EXPECT_EQ(r.job_users, (std::set<std::string>{"bob"}));
  EXPECT_EQ(r.held_idle, core::Seconds(20));
  EXPECT_EQ(r.harvested, core::Seconds(40));
  EXPECT_EQ(r.busy, core::Seconds(60));  // both count as busy too
  EXPECT_EQ(r.idle, core::Seconds(0));
  const MinuteRollup merged = MergeRollups(r, r);
  EXPECT_EQ(merged.held_idle, core::Seconds(40));
  EXPECT_EQ(merged.harvested, core::Seconds(80));
  EXPECT_EQ(merged.job_users, r.job_users);
}

// Before: a job lent the GPU whose process had not opened it (loading its
// data; `sleep` on the demo) was harvested time credited to no one, and
// `cost report --by user` showed it as (unknown).
TEST(MinuteRollupTest, TheLentJobsUserIsNamedBeforeItsProcessShows) {
  MinuteRollupBuilder b(core::Seconds(5));
  for (int s = 0; s < 60; ++s) {
    GpuSample lent = Sample(s, 0);
    lent.lent_to_job = 9;
    lent.lent_to_user = "carol";
    b.Add(lent, V(GpuState::kHarvested));
  }
  auto done = b.Add(Sample(60, 0), V(GpuState::kIdle));
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].job_users, (std::set<std::string>{"carol"}));
  EXPECT_TRUE(done[0].users.empty());
  EXPECT_EQ(done[0].harvested, core::Seconds(60));
}

TEST(MinuteRollupTest, GapsAndMissingReadingsAreNotIdleTime) {
  MinuteRollupBuilder b(core::Seconds(5));
  b.Add(Sample(0, 0), V(GpuState::kIdle));
  GpuSample no_reading = Sample(1, 0);
  no_reading.utilization_pct.reset();
  b.Add(no_reading, V(GpuState::kUnknown));
  b.Add(Sample(40, 0), V(GpuState::kIdle));  // 39 s gap
  auto done = b.Flush();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].samples, 2);              // the unreadable sample is not counted
  EXPECT_EQ(done[0].idle, core::Seconds(1));  // 0..1 only; the gap is nobody's time
}

TEST(UsageProfileTest, GpuUserAndProjectOccupancy) {
  UsageProfiles p(std::map<std::string, std::string>{{"alice", "vision"}});
  MinuteRollup r;
  r.uuid = core::GpuUuid("GPU-a");
  r.minute = kMonday + core::Seconds(3600 * 9);  // Monday 09:00
  r.users = {"alice"};
  r.observed = core::Seconds(60);
  r.busy = core::Seconds(45);
  r.idle = core::Seconds(15);
  p.Add(r);
  r.users = {};
  r.busy = core::Seconds(0);
  r.idle = core::Seconds(60);
  p.Add(r);
  EXPECT_DOUBLE_EQ(*p.gpus().at("GPU-a").Occupancy(9), 45.0 / 120);
  // alice held the GPU for one of the two observed minutes.
  EXPECT_DOUBLE_EQ(*p.WithHostTime(p.users()).at("alice").Occupancy(9), 60.0 / 120);
  EXPECT_DOUBLE_EQ(*p.WithHostTime(p.projects()).at("vision").Occupancy(9), 60.0 / 120);
  EXPECT_DOUBLE_EQ(p.host().observed_s[9], 120);
  // Two more GPU-minutes observed without alice halve her share.
  r.uuid = core::GpuUuid("GPU-b");
  p.Add(r);
  r.uuid = core::GpuUuid("GPU-c");
  p.Add(r);
  EXPECT_DOUBLE_EQ(*p.WithHostTime(p.users()).at("alice").Occupancy(9), 60.0 / 240);
  EXPECT_FALSE(p.gpus().at("GPU-a").Occupancy(10).has_value());
}

TEST(AlertEvaluatorTest, FiresOnceAfterTheDurationAndResolves) {
  AlertEvaluator alerts(
      {{"GpuHeldIdle", AlertCondition::kHeldIdle, core::Seconds(10), 0, "warning"}});
  const std::vector<ObservedProcess> procs{
      {7, "bob", "jupyter", core::Bytes::GiB(40), false, {}, {}}};
  std::vector<AlertEvent> all;
  for (int s = 0; s < 30; ++s) {
    Verdict v = V(s < 20 ? GpuState::kHeldIdle : GpuState::kBusy);
    v.evidence.reason = "1 process(es) hold 40.0 GiB";
    for (AlertEvent& e : alerts.Observe(Sample(s, 0, procs), v)) all.push_back(e);
    if (s == 15) {
      EXPECT_EQ(alerts.Firing().size(), 1u);
    }
  }
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[0].firing);
  EXPECT_EQ(all[0].rule, "GpuHeldIdle");
  EXPECT_EQ(all[0].starts_at, kMonday);
  EXPECT_EQ(all[0].users, std::vector<std::string>{"bob"});
  EXPECT_THAT(all[0].summary, HasSubstr("held_idle for 10s: 1 process(es) hold 40.0 GiB"));
  EXPECT_FALSE(all[1].firing);
  EXPECT_EQ(all[1].ends_at, kMonday + core::Seconds(20));
  EXPECT_TRUE(alerts.Firing().empty());
}

TEST(AlertEvaluatorTest, TemperaturePowerAndLoss) {
  AlertEvaluator alerts({{"Hot", AlertCondition::kTemperatureAbove, {}, 85, "critical"},
                         {"Power", AlertCondition::kPowerAbove, {}, 650, "warning"},
                         {"Lost", AlertCondition::kGpuLost, {}, 0, "critical"}});
  GpuSample s = Sample(0, 50);
  s.temperature_c = 91;
  s.power_w = 690;
  auto events = alerts.Observe(s, V(GpuState::kBusy));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_THAT(events[0].summary, HasSubstr("at 91°C"));
  EXPECT_THAT(events[1].summary, HasSubstr("drawing 690 W"));
  GpuSample lost = Sample(1, 0);
  lost.healthy = false;
  lost.health_detail = "GPU_IS_LOST";
  events = alerts.Observe(lost, V(GpuState::kUnhealthy));
  ASSERT_EQ(events.size(), 3u);  // hot and power resolve (no readings), lost fires
  EXPECT_THAT(events[2].summary, HasSubstr("GPU_IS_LOST"));
  EXPECT_TRUE(events[2].firing);
}

TEST(VerdictJsonTest, RoundTripsAndRejectsGarbage) {
  Verdict v = V(GpuState::kHeldIdle);
  v.since = kMonday;
  v.at = kMonday + core::Seconds(3);
  v.evidence.reason = "why";
  v.evidence.power_w = 95.5;
  v.evidence.processes = 2;
  auto back = VerdictFromJson(VerdictToJson(v));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, v);
  EXPECT_EQ(VerdictToJson(v)["since"], "2026-11-30T00:00:00.000Z");
  v.evidence.quiet_forecast =
      QuietForecast{core::Seconds(600), core::Seconds(3600), core::Seconds(7200), 14, true};
  EXPECT_EQ(VerdictToJson(v)["evidence"]["quiet_forecast"]["p50_s"], 3600);
  back = VerdictFromJson(VerdictToJson(v));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, v);
  nlohmann::json bad = VerdictToJson(v);
  bad["state"] = "sleepy";
  EXPECT_THAT(VerdictFromJson(bad).status().message(), HasSubstr("unknown GPU state \"sleepy\""));
  EXPECT_FALSE(VerdictFromJson(nlohmann::json::object()).ok());
}

}  // namespace
}  // namespace gleaner::observe

namespace gleaner::observe {
namespace {

TEST(MinuteRollupTest, TimeAcrossABoundaryIsSplit) {
  MinuteRollupBuilder b(core::Seconds(30));
  GpuSample s = Sample(50, 0);
  b.Add(s, V(GpuState::kIdle));
  auto done = b.Add(Sample(70, 0), V(GpuState::kIdle));  // 50..60 old minute, 60..70 new
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].observed, core::Seconds(10));
  auto rest = b.Flush();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].observed, core::Seconds(10));
  EXPECT_EQ(rest[0].minute, kMonday + core::Seconds(60));
}

TEST(IdleClassifierRobustnessTest, ZeroWindowsAndUnreadableProcessLists) {
  IdleConfig config;
  config.idle_after = core::Duration{};
  config.held_idle_after = core::Duration{};
  config.idle_after_with_history = core::Duration{};
  IdleClassifier c(config);
  for (int i = 0; i < 5; ++i) c.Observe(Sample(i, 0));  // must not crash on empty windows
  EXPECT_EQ(c.verdicts().at(core::GpuUuid("GPU-a")).state, GpuState::kIdle);

  IdleClassifier d({});
  const std::vector<ObservedProcess> procs{{7, "bob", "x", core::Bytes::GiB(1), false, {}, {}}};
  for (int i = 0; i < 400; ++i) d.Observe(Sample(i, 0, procs));
  GpuSample unreadable = Sample(400, 0);
  unreadable.processes_known = false;
  d.Observe(unreadable);
  // The list comes back with the same process: nothing new appeared.
  EXPECT_EQ(d.Observe(Sample(401, 0, procs)).state, GpuState::kHeldIdle);
}

}  // namespace
}  // namespace gleaner::observe

namespace gleaner::observe {
namespace {

TEST(IdleClassifierOwnerTest, AForeignProcessBesideAJobIsTheOwnerReturning) {
  IdleClassifier c({});
  ObservedProcess job{100, "gleaner-user", "python sweep.py", core::Bytes::GiB(5), true, {}, {}};
  ObservedProcess owner{200, "bob", "python train.py", core::Bytes::GiB(20), false, {}, {}};
  Verdict v = c.Observe(Sample(0, 90, {job}));
  EXPECT_EQ(v.state, GpuState::kHarvested);
  EXPECT_EQ(v.evidence.foreign_processes, 0);
  v = c.Observe(Sample(1, 90, {job, owner}));
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_EQ(v.evidence.foreign_processes, 1);
  EXPECT_THAT(
      v.evidence.reason,
      ::testing::HasSubstr("owner returned: process 200 of bob beside gleaner job process 100"));
}

TEST(LendingTest, AQuietExpectedTooShortIsNotLent) {
  const QuietForecast short_quiet{core::Seconds(600), core::Seconds(900), core::Seconds(1200), 20,
                                  true};
  EXPECT_EQ(ShortQuietBlock(short_quiet, core::Seconds(1800)),
            "its quiet is expected to last only 10m00s at p80, under the 30m00s worth lending "
            "([idle] min_expected_quiet_s)");
  EXPECT_EQ(ShortQuietBlock(short_quiet, core::Seconds(600)), "");    // long enough
  EXPECT_EQ(ShortQuietBlock(short_quiet, {}), "");                    // turned off
  EXPECT_EQ(ShortQuietBlock(std::nullopt, core::Seconds(1800)), "");  // nothing known: lent
  Verdict v;
  v.state = GpuState::kIdle;
  EXPECT_TRUE(MayLend(v, false));
  v.evidence.lend_blocked = ShortQuietBlock(short_quiet, core::Seconds(1800));
  EXPECT_FALSE(MayLend(v, false));
  EXPECT_TRUE(MayLend(v, true));  // a job placed before runs on
}

}  // namespace
}  // namespace gleaner::observe
