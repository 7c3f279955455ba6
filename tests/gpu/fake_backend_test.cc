#include "gpu/fake_backend.h"

#include <gtest/gtest.h>

namespace gleaner::gpu {
namespace {

Scenario Demo() {
  auto s = LoadScenario("demo");
  if (!s.ok()) std::abort();
  return std::move(s).value();
}

TEST(FakeBackendTest, PlaysTheScenarioAlongTheClock) {
  core::ManualClock clock(core::FromUnixMicros(1'700'000'000'000'000));
  auto backend = FakeBackend::Create(Demo(), clock);
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ((*backend)->Driver().source, "fake:demo");

  auto at0 = (*backend)->Snapshot();
  ASSERT_TRUE(at0.ok());
  ASSERT_EQ(at0->size(), 8u);
  EXPECT_TRUE((*at0)[5].processes.value().empty());  // GPU 5 idle at first

  clock.Advance(core::Seconds(130));
  auto at130 = (*backend)->Snapshot();
  ASSERT_EQ((*at130)[5].processes.value().size(), 1u);  // dave's sweep arrived at 120 s
  EXPECT_EQ((*at130)[5].processes.value()[0].pid, 51220u);
  EXPECT_EQ((*at130)[5].utilization_gpu_pct.value(), 86u);

  clock.Advance(core::Seconds(300));  // 430 s: the sweep left at 420 s
  EXPECT_TRUE((*(*backend)->Snapshot())[5].processes.value().empty());

  clock.Advance(core::Seconds(300));  // 730 s = 130 s into the second period
  EXPECT_EQ((*(*backend)->Snapshot())[5].processes.value().size(), 1u);
}

TEST(FakeBackendTest, RecallsThePastOfAPeriodicScenario) {
  core::ManualClock clock(core::FromUnixMicros(1'700'000'000'000'000));
  auto backend = FakeBackend::Create(Demo(), clock);
  ASSERT_TRUE(backend.ok());
  // 300 s before the start is 300 s into the previous 600 s period, when
  // dave's sweep (120-420 s) ran on GPU 5.
  auto before = (*backend)->Recall(core::Seconds(300));
  ASSERT_TRUE(before.ok());
  ASSERT_EQ((*before)[5].processes.value().size(), 1u);
  EXPECT_EQ((*before)[5].processes.value()[0].pid, 51220u);
  EXPECT_TRUE((*(*backend)->Recall(core::Seconds(150)))[5].processes.value().empty());

  clock.Advance(core::Seconds(130));  // the sweep is on now; 10 s ago it was not
  EXPECT_EQ((*(*backend)->Snapshot())[5].processes.value().size(), 1u);
  EXPECT_TRUE((*(*backend)->Recall(core::Seconds(20)))[5].processes.value().empty());
}

TEST(FakeBackendTest, EveryReadingHasAValueInTheDemo) {
  core::ManualClock clock;
  auto backend = FakeBackend::Create(Demo(), clock);
  auto snap = (*backend)->Snapshot();
  for (const GpuSnapshot& g : *snap) {
    EXPECT_EQ(g.health, GpuHealth::kOk);
    EXPECT_FALSE(g.uuid.empty());
    EXPECT_TRUE(g.name.has_value() && g.pci_bus_id.has_value() && g.memory_total.has_value() &&
                g.memory_used.has_value() && g.utilization_gpu_pct.has_value() &&
                g.utilization_memory_pct.has_value() && g.temperature_c.has_value() &&
                g.power_draw_w.has_value() && g.power_limit_w.has_value() &&
                g.sm_clock_mhz.has_value() && g.processes.has_value())
        << "GPU " << g.index;
  }
  EXPECT_EQ((*snap)[0].memory_total.value(), core::Bytes::MiB(81559));
  EXPECT_DOUBLE_EQ((*snap)[0].power_draw_w.value(), 612.5);
}

TEST(FakeBackendTest, DriverThatFailsToInitialise) {
  Scenario s = Demo();
  s.driver.init_error = ScenarioError::kDriverNotLoaded;
  core::ManualClock clock;
  auto backend = FakeBackend::Create(std::move(s), clock);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), core::StatusCode::kUnavailable);
  EXPECT_NE(backend.status().message().find("DRIVER_NOT_LOADED"), std::string::npos);
}

TEST(FakeBackendTest, TopologyCoversEveryPairOnce) {
  core::ManualClock clock;
  auto backend = FakeBackend::Create(Demo(), clock);
  auto links = (*backend)->Topology();
  ASSERT_TRUE(links.ok());
  EXPECT_EQ(links->size(), 28u);  // 8 choose 2
  for (const GpuLink& l : *links) {
    EXPECT_TRUE(l.nvlink.value());
    EXPECT_NE(l.a, l.b);
  }
}

}  // namespace
}  // namespace gleaner::gpu
