// The co-location rules: how much may be lent beside a holder, how its
// peak is learned, and when a job beside it must leave.
#include "observe/colocation.h"

#include <gtest/gtest.h>

#include "observe/idle_classifier.h"
#include "observe/lending.h"

namespace gleaner::observe {
namespace {

const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);
core::TimePoint Minute(int m) { return kT0 + core::Seconds(int64_t{60} * m); }

TEST(ColocationTest, LendsWhatIsLeftAboveThePeakAndTheMargin) {
  ColocationConfig c;  // margin 10 %, an hour of history
  const Headroom h = HeadroomBeside(core::Bytes::GiB(80), core::Bytes::GiB(30),
                                    {core::Bytes::GiB(35), core::Seconds(7200)}, c);
  EXPECT_EQ(h.holder_peak, core::Bytes::GiB(35));
  EXPECT_EQ(h.margin, core::Bytes::GiB(8));
  EXPECT_EQ(h.lendable, core::Bytes::GiB(37));
  EXPECT_NE(h.reason.find("37.0 GiB to lend"), std::string::npos) << h.reason;
}

TEST(ColocationTest, WhatTheHolderHoldsNowCountsWhenItIsAboveThePeak) {
  const Headroom h = HeadroomBeside(core::Bytes::GiB(80), core::Bytes::GiB(50),
                                    {core::Bytes::GiB(35), core::Seconds(7200)}, {});
  EXPECT_EQ(h.lendable, core::Bytes::GiB(22));
}

TEST(ColocationTest, NothingWithoutEnoughHistoryOrRoom) {
  const Headroom young = HeadroomBeside(core::Bytes::GiB(80), core::Bytes::GiB(10),
                                        {core::Bytes::GiB(10), core::Seconds(1200)}, {});
  EXPECT_EQ(young.lendable, core::Bytes{});
  EXPECT_NE(young.reason.find("20m0"), std::string::npos) << young.reason;
  const Headroom full = HeadroomBeside(core::Bytes::GiB(80), core::Bytes::GiB(72),
                                       {core::Bytes::GiB(72), core::Seconds(7200)}, {});
  EXPECT_EQ(full.lendable, core::Bytes{});
  EXPECT_NE(full.reason.find("no room"), std::string::npos) << full.reason;
}

TEST(ColocationTest, ThePeakWindowForgetsWhatIsOlderThanItsWindow) {
  HolderPeakWindow w(core::Seconds(3600));
  w.Add(Minute(0), core::Bytes::GiB(40), core::Seconds(60));
  for (int m = 1; m <= 90; ++m) w.Add(Minute(m), core::Bytes::GiB(20), core::Seconds(60));
  EXPECT_EQ(w.At(Minute(30)).peak, core::Bytes::GiB(40));
  const HolderHistory late = w.At(Minute(90));
  EXPECT_EQ(late.peak, core::Bytes::GiB(20));
  EXPECT_EQ(late.observed, core::Seconds(61 * 60));  // minutes 30..90
  w.Reset();
  EXPECT_EQ(w.At(Minute(90)).observed, core::Duration{});
}

TEST(ColocationTest, AJobBesideLeavesWhenTheHolderWakesOrGrows) {
  Verdict quiet;
  quiet.state = GpuState::kHeldIdle;
  EXPECT_FALSE(SharedClaim(quiet, core::Bytes::GiB(30), core::Bytes::GiB(30)));
  const auto grew = SharedClaim(quiet, core::Bytes::GiB(31), core::Bytes::GiB(30));
  ASSERT_TRUE(grew);
  EXPECT_NE(grew->find("past the peak"), std::string::npos);
  Verdict busy;
  busy.state = GpuState::kBusy;
  busy.evidence.reason = "utilization 55% at or above 10%";
  const auto woke = SharedClaim(busy, core::Bytes::GiB(30), core::Bytes::GiB(30));
  ASSERT_TRUE(woke);
  EXPECT_NE(woke->find("utilization 55%"), std::string::npos);
}

const core::GpuUuid kGpu("GPU-1");

MinuteRollup HolderMinute(int m, std::set<uint32_t> pids, core::Bytes used,
                          core::Duration harvested = {}) {
  MinuteRollup r;
  r.uuid = kGpu;
  r.minute = Minute(m);
  r.memory_used_max = used;
  r.pids = std::move(pids);
  r.observed = core::Seconds(60);
  r.harvested = harvested;
  return r;
}

GpuSample HeldSample(core::TimePoint at, double holder_util, core::Bytes holder_memory) {
  GpuSample s;
  s.at = at;
  s.uuid = kGpu;
  s.utilization_pct = holder_util;
  s.memory_total = core::Bytes::GiB(80);
  s.memory_used = holder_memory;
  s.processes_known = true;
  s.processes = {{7, "alice", "jupyter", holder_memory, false, holder_util, {}}};
  return s;
}

Verdict HeldVerdict() {
  Verdict v;
  v.uuid = kGpu;
  v.state = GpuState::kHeldIdle;
  return v;
}

// Holder 7 seen alone at 30 GiB for the last 90 minutes.
HolderLearner LearnedHolder() {
  HolderLearner learner({});
  for (int m = 0; m < 90; ++m) learner.Learn(HolderMinute(m, {7}, core::Bytes::GiB(30)));
  return learner;
}

TEST(HolderLearnerTest, LearnsTheHolderAloneAndStartsAfreshForAnotherHolder) {
  HolderLearner learner({});
  const Verdict held = HeldVerdict();
  for (int m = 0; m < 90; ++m)
    learner.Learn(HolderMinute(m, {7}, core::Bytes::GiB(m == 10 ? 35 : 30)));
  // A minute with a gleaner job beside it says nothing of the holder.
  learner.Learn(HolderMinute(90, {7, 9}, core::Bytes::GiB(70), core::Seconds(60)));
  BesideHolder b = learner.Beside(HeldSample(Minute(91), 0, core::Bytes::GiB(30)), held);
  EXPECT_EQ(b.holder_peak, core::Bytes::GiB(35));
  EXPECT_EQ(b.lendable, core::Bytes::GiB(37));  // 80 - 35 - 8
  EXPECT_EQ(b.history, core::Seconds(90 * 60));

  // Another process holds the GPU: its history starts now.
  learner.Learn(HolderMinute(92, {8}, core::Bytes::GiB(10)));
  b = learner.Beside(HeldSample(Minute(93), 0, core::Bytes::GiB(30)), held);
  EXPECT_EQ(b.lendable, core::Bytes());
  EXPECT_NE(b.reason.find("needed to learn its peak"), std::string::npos) << b.reason;
}

TEST(HolderLearnerTest, AHolderThatStartedAfterItsHistoryHasAReusedPidAndNoHistory) {
  HolderLearner learner = LearnedHolder();
  const Verdict held = HeldVerdict();
  GpuSample s = HeldSample(Minute(91), 0, core::Bytes::GiB(30));
  s.processes[0].started_at = Minute(0) + core::Seconds(30);  // within the first minute: its own
  EXPECT_EQ(learner.Beside(s, held).lendable, core::Bytes::GiB(42));
  s.processes[0].started_at = Minute(85);  // pid 7 is another process now
  const BesideHolder b = learner.Beside(s, held);
  EXPECT_EQ(b.lendable, core::Bytes());
  EXPECT_NE(b.reason.find("needed to learn its peak"), std::string::npos) << b.reason;
}

TEST(HolderLearnerTest, NothingIsLentWhereTheDriverCannotTellTheHolderWaking) {
  HolderLearner learner = LearnedHolder();
  const Verdict held = HeldVerdict();
  GpuSample s = HeldSample(Minute(91), 0, core::Bytes::GiB(30));
  s.processes[0].utilization_pct.reset();
  const BesideHolder b = learner.Beside(s, held);
  EXPECT_EQ(b.lendable, core::Bytes());
  EXPECT_NE(b.reason.find("own utilization"), std::string::npos) << b.reason;
}

// The classifier beside a holder: shared while the holder is quiet, and
// the owner's again when it computes, outgrows the loan, or another
// process comes.
TEST(SharedVerdictTest, TheHolderIsJudgedByItsOwnUtilization) {
  IdleClassifier c({});
  const core::TimePoint t0 = kT0;
  Verdict v;
  for (int s = 0; s <= 300; ++s) {
    v = c.Observe(HeldSample(t0 + core::Seconds(s), 0, core::Bytes::GiB(30)));
  }
  ASSERT_EQ(v.state, GpuState::kHeldIdle);
  const auto beside = [&](int s, double holder_util, core::Bytes holder_memory,
                          std::optional<ObservedProcess> stranger = std::nullopt) {
    GpuSample x = HeldSample(t0 + core::Seconds(s), holder_util, holder_memory);
    x.utilization_pct = 97;  // the job computes
    x.processes.push_back({100, "bob", "python sweep.py", core::Bytes::GiB(5), true, 95.0, {}});
    if (stranger) x.processes.push_back(*stranger);
    x.lent_to_job = 12;
    x.beside_holder = LoanBesideHolder{{7}, core::Bytes::GiB(32), core::Bytes::GiB(20)};
    return c.Observe(x);
  };
  v = beside(301, 0, core::Bytes::GiB(30));
  EXPECT_EQ(v.state, GpuState::kShared) << v.evidence.reason;
  EXPECT_FALSE(ClaimOf(v).has_value());
  EXPECT_TRUE(MayLend(v, true));
  ASSERT_TRUE(v.evidence.beside_holder.has_value());
  EXPECT_EQ(v.evidence.beside_holder->borrower_memory, core::Bytes::GiB(5));
  EXPECT_EQ(LendMemory(v), core::Bytes::GiB(20));

  v = beside(302, 0, core::Bytes::GiB(33));
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_NE(v.evidence.reason.find("past the peak of 32.0 GiB"), std::string::npos)
      << v.evidence.reason;
  EXPECT_TRUE(ClaimOf(v).has_value());

  v = beside(303, 0, core::Bytes::GiB(30), ObservedProcess{55, "carol", "x", {}, false, 0.0, {}});
  EXPECT_NE(v.evidence.reason.find("owner returned: process 55"), std::string::npos)
      << v.evidence.reason;

  v = beside(304, 60, core::Bytes::GiB(30));
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_NE(v.evidence.reason.find("holder 7 computes again: 60%"), std::string::npos)
      << v.evidence.reason;
  EXPECT_TRUE(ClaimOf(v).has_value());
}

// A parked holder is off its GPU: the GPU is idle and lent whole at once;
// while the holder is restored it is busy and claimed, so a job on it
// leaves first; a notice shows in the held-idle reason.
TEST(ParkedVerdictTest, IdleWhileParkedClaimedWhileRestoring) {
  IdleClassifier c({});
  Verdict v;
  for (int s = 0; s <= 300; ++s) {
    GpuSample x = HeldSample(kT0 + core::Seconds(s), 0, core::Bytes::GiB(30));
    if (s == 300) {
      x.parking = HolderParking{HolderParking::Phase::kNotice, 7,  "alice", core::Bytes::GiB(30),
                                kT0 + core::Seconds(900),      {}, {}};
    }
    v = c.Observe(x);
  }
  ASSERT_EQ(v.state, GpuState::kHeldIdle);
  EXPECT_NE(v.evidence.reason.find("to be parked in 10m"), std::string::npos) << v.evidence.reason;
  ASSERT_TRUE(v.evidence.parking.has_value());

  GpuSample parked;
  parked.at = kT0 + core::Seconds(901);
  parked.uuid = kGpu;
  parked.utilization_pct = 0;
  parked.processes_known = true;  // the holder is no longer listed
  parked.parking = HolderParking{HolderParking::Phase::kParked, 7,  "alice", core::Bytes::GiB(30),
                                 kT0 + core::Seconds(900),      {}, {}};
  v = c.Observe(parked);
  EXPECT_EQ(v.state, GpuState::kIdle) << v.evidence.reason;
  EXPECT_NE(v.evidence.reason.find("process 7 of alice parked for 1s (30.0 GiB in host memory)"),
            std::string::npos)
      << v.evidence.reason;
  EXPECT_TRUE(MayLend(v, false));

  // Lent whole, then the holder wakes: the job is sent away.
  parked.at += core::Seconds(1);
  parked.lent_to_job = 12;
  v = c.Observe(parked);
  EXPECT_EQ(v.state, GpuState::kHarvested) << v.evidence.reason;
  parked.at += core::Seconds(1);
  parked.parking->phase = HolderParking::Phase::kRestoring;
  parked.parking->reason = "process 7 uses the CPU again: it woke";
  v = c.Observe(parked);
  EXPECT_EQ(v.state, GpuState::kBusy);
  EXPECT_NE(v.evidence.reason.find("process 7 is being restored (process 7 uses the CPU again: "
                                   "it woke); gleaner job 12 leaves first"),
            std::string::npos)
      << v.evidence.reason;
  EXPECT_TRUE(ClaimOf(v).has_value());
  EXPECT_FALSE(MayLend(v, true));

  // Someone else's process on a parked GPU is an owner, as anywhere.
  parked.at += core::Seconds(1);
  parked.lent_to_job.reset();
  parked.parking->phase = HolderParking::Phase::kParked;
  parked.processes = {{55, "carol", "x", core::Bytes::GiB(1), false, 0.0, {}}};
  v = c.Observe(parked);
  EXPECT_EQ(v.state, GpuState::kBusy) << v.evidence.reason;
}

}  // namespace
}  // namespace gleaner::observe
