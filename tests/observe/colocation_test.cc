// The co-location rules: how much may be lent beside a holder, how its
// peak is learned, and when a job beside it must leave.
#include "observe/colocation.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gleaner::observe
