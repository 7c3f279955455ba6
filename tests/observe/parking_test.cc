// The parking rules: who is told, when a holder is parked, and what brings
// it back; what refuses it (a second process, an opt-out, `gleaner keep`,
// too little host memory), and a holder that exits while parked.
#include "observe/parking.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gleaner::observe {
namespace {

using ::testing::HasSubstr;
using Kind = ParkAction::Kind;

const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);
const core::GpuUuid kGpu("GPU-1");
const core::Bytes kHostTotal = core::Bytes::GiB(512);

core::TimePoint At(int64_t s) { return kT0 + core::Seconds(s); }

ParkFacts HeldSince(int64_t since_s, std::vector<uint32_t> pids = {4242}) {
  ParkFacts f;
  f.verdict.uuid = kGpu;
  f.verdict.state = GpuState::kHeldIdle;
  f.verdict.since = At(since_s);
  for (uint32_t pid : pids) {
    f.holders.push_back(
        {pid, "alice", "python -m ipykernel", core::Bytes::GiB(30), false, 0.0, {}});
  }
  return f;
}

ParkingConfig On() {
  ParkingConfig c;
  c.enabled = true;  // park after 1 h held idle, 10 min of notice
  return c;
}

// A holder process whose CPU time the test sets.
struct Holder {
  std::optional<core::Duration> cpu = core::Seconds(10);
  std::function<std::optional<core::Duration>(uint32_t)> Reader() {
    return [this](uint32_t) { return cpu; };
  }
};

std::vector<ParkAction> PlanAt(ParkingPlanner& p, const ParkFacts& f, int64_t now_s, Holder& holder,
                               std::optional<core::Bytes> free = core::Bytes::GiB(256)) {
  return p.Plan({f}, free, kHostTotal, holder.Reader(), At(now_s));
}

TEST(ParkingPlannerTest, OffByDefault) {
  ParkingPlanner p({});
  Holder h;
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 86400, h).empty());
}

TEST(ParkingPlannerTest, ToldThenParkedThenRestoredWhenItsProcessWakes) {
  ParkingPlanner p(On());
  Holder h;
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 3599, h).empty());
  auto told = PlanAt(p, HeldSince(0), 3600, h);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].kind, Kind::kNotify);
  EXPECT_EQ(told[0].at, At(4200));
  EXPECT_THAT(told[0].reason, HasSubstr("process 4242 of alice has held 30.0 GiB idle for 1h"));
  EXPECT_THAT(told[0].reason, HasSubstr("gleaner keep"));

  EXPECT_TRUE(PlanAt(p, HeldSince(0), 4199, h).empty());
  auto park = PlanAt(p, HeldSince(0), 4200, h);
  ASSERT_EQ(park.size(), 1u);
  EXPECT_EQ(park[0].kind, Kind::kPark);
  EXPECT_EQ(park[0].pid, 4242u);
  EXPECT_EQ(park[0].memory, core::Bytes::GiB(30));
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 4201, h).empty());  // parking: the daemon's turn
  p.Parked(kGpu, *h.cpu, At(4202));

  // Heartbeats: a few milliseconds a second are not a wake.
  h.cpu = *h.cpu + core::Duration(50'000);
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 4212, h).empty());
  // A cell runs: a second of CPU in two.
  h.cpu = *h.cpu + core::Seconds(1);
  auto restore = PlanAt(p, HeldSince(0), 4214, h);
  ASSERT_EQ(restore.size(), 1u);
  EXPECT_EQ(restore[0].kind, Kind::kRestore);
  EXPECT_THAT(restore[0].reason, HasSubstr("uses the CPU again"));
  // Blocked in its first CUDA call, it uses no CPU: still restored, until done.
  EXPECT_EQ(PlanAt(p, HeldSince(0), 4215, h).at(0).kind, Kind::kRestore);
  p.Release(kGpu);
  ParkFacts busy = HeldSince(0);
  busy.verdict.state = GpuState::kBusy;
  EXPECT_TRUE(PlanAt(p, busy, 4216, h).empty());
}

TEST(ParkingPlannerTest, TheHolderRefusesOrWakesDuringTheNotice) {
  ParkingPlanner p(On());
  Holder h;
  ASSERT_EQ(PlanAt(p, HeldSince(0), 3600, h).size(), 1u);
  ParkFacts kept = HeldSince(0);
  kept.kept = true;
  auto forgot = PlanAt(p, kept, 3700, h);
  ASSERT_EQ(forgot.size(), 1u);
  EXPECT_EQ(forgot[0].kind, Kind::kForget);
  EXPECT_THAT(forgot[0].reason, HasSubstr("not parked: the holder asked to keep it"));
  EXPECT_TRUE(PlanAt(p, kept, 4200, h).empty());

  ParkingPlanner q(On());
  ASSERT_EQ(PlanAt(q, HeldSince(0), 3600, h).size(), 1u);
  ParkFacts woke = HeldSince(0);
  woke.verdict.state = GpuState::kBusy;
  EXPECT_THAT(PlanAt(q, woke, 3700, h).at(0).reason, HasSubstr("no longer held idle"));
}

TEST(ParkingPlannerTest, NeverASharedContextAnOptOutOrMoreThanTheHostHolds) {
  ParkingConfig c = On();
  c.never_park_users = {"alice"};
  ParkingPlanner opted_out(c);
  Holder h;
  EXPECT_TRUE(PlanAt(opted_out, HeldSince(0), 3600, h).empty());

  ParkingPlanner p(On());
  EXPECT_TRUE(PlanAt(p, HeldSince(0, {4242, 4243}), 3600, h).empty());
  // 30 GiB held and a 51 GiB margin (10 % of 512 GiB) need 81 GiB free.
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 3600, h, core::Bytes::GiB(80)).empty());
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 3600, h, std::nullopt).empty());
  EXPECT_EQ(PlanAt(p, HeldSince(0), 3600, h, core::Bytes::GiB(82)).size(), 1u);
  // Free memory gone during the notice: not parked, with the figures.
  EXPECT_THAT(PlanAt(p, HeldSince(0), 3700, h, core::Bytes::GiB(40)).at(0).reason,
              HasSubstr("host memory: 40.0 GiB free"));
}

TEST(ParkingPlannerTest, AskedBackOrParkedTooLongOrGone) {
  ParkingConfig c = On();
  c.max_park = core::Seconds(7200);
  ParkingPlanner p(c);
  Holder h;
  p.Adopt(kGpu, 4242, "alice", core::Bytes::GiB(30), *h.cpu, At(0));  // found parked at start
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 60, h).empty());
  ParkFacts asked = HeldSince(0);
  asked.unpark_asked = true;
  EXPECT_EQ(PlanAt(p, asked, 61, h).at(0).reason, "asked to unpark");

  ParkingPlanner q(c);
  q.Adopt(kGpu, 4242, "alice", core::Bytes::GiB(30), *h.cpu, At(0));
  EXPECT_THAT(PlanAt(q, HeldSince(0), 7200, h).at(0).reason,
              HasSubstr("parked for the most allowed, 2h"));

  ParkingPlanner r(c);
  r.Adopt(kGpu, 4242, "alice", core::Bytes::GiB(30), *h.cpu, At(0));
  h.cpu.reset();  // exited while parked
  auto gone = PlanAt(r, HeldSince(0), 60, h);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].kind, Kind::kForget);
  EXPECT_THAT(gone[0].reason, HasSubstr("exited while parked"));
}

TEST(ParkingPlannerTest, AFailedParkIsNotTriedAgainAtOnce) {
  ParkingPlanner p(On());
  Holder h;
  ASSERT_EQ(PlanAt(p, HeldSince(0), 3600, h).size(), 1u);
  ASSERT_EQ(PlanAt(p, HeldSince(0), 4200, h).at(0).kind, Kind::kPark);
  p.ParkFailed(kGpu, At(4200));
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 4201, h).empty());
  EXPECT_TRUE(PlanAt(p, HeldSince(0), 7799, h).empty());
  EXPECT_EQ(PlanAt(p, HeldSince(0), 7800, h).at(0).kind, Kind::kNotify);
}

// A job beside the holder (shared) does not keep the holder from being
// parked: the job runs on, and leaves before the holder is restored.
TEST(ParkingPlannerTest, AHolderWithAJobBesideItIsParkedToo) {
  ParkingPlanner p(On());
  Holder h;
  ParkFacts shared = HeldSince(0);
  shared.verdict.state = GpuState::kShared;
  ASSERT_EQ(PlanAt(p, shared, 3600, h).at(0).kind, Kind::kNotify);
  EXPECT_EQ(PlanAt(p, shared, 4200, h).at(0).kind, Kind::kPark);
}

}  // namespace
}  // namespace gleaner::observe
