#include "slurm/allocation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "slurm/idle_alerts.h"

namespace gleaner::slurm {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using ::testing::HasSubstr;

const core::TimePoint kT0{core::Seconds(1'800'000'000)};

SlurmJob Job(const std::string& id, std::vector<uint32_t> gpus, const std::string& node = "n1") {
  SlurmJob j;
  j.id = id;
  j.user = "alice";
  j.account = "physics";
  j.partition = "gpu";
  j.state = "RUNNING";
  j.start_time = kT0;
  j.gpu_count = static_cast<int>(gpus.size());
  j.gpus_by_node[node] = std::move(gpus);
  return j;
}

HostGpu Gpu(uint32_t index, observe::GpuState state, core::TimePoint since) {
  HostGpu g;
  g.index = index;
  g.uuid = core::GpuUuid("GPU-" + std::to_string(index));
  g.verdict = observe::Verdict{g.uuid, state, since, since, {}};
  return g;
}

TEST(SlurmAllocationTest, JoinsEachAllocatedGpuToItsVerdict) {
  SlurmJob waiting = Job("9", {});
  waiting.state = "PENDING";
  const std::vector<SlurmJob> jobs = {Job("1", {0, 1}), Job("2", {2}, "n2"), waiting,
                                      Job("3", {3, 7})};
  const std::vector<HostGpu> gpus = {Gpu(0, observe::GpuState::kIdle, kT0),
                                     Gpu(1, observe::GpuState::kBusy, kT0),
                                     Gpu(3, observe::GpuState::kHeldIdle, kT0 + hours(1))};
  const auto on_host = JobsOnHost(jobs, "n1", gpus);
  ASSERT_EQ(on_host.size(), 2u);  // job 2 is on another node; job 9 waits
  EXPECT_EQ(on_host[0].job.id, "1");
  EXPECT_EQ(on_host[0].UnusedGpus(kT0 + hours(2)), 1);
  EXPECT_EQ(on_host[1].job.id, "3");
  // GPU 7 is not on this host: allocated, with no verdict to judge it by.
  EXPECT_TRUE(on_host[1].gpus[1].uuid.empty());
  EXPECT_EQ(on_host[1].UnusedGpus(kT0 + hours(2)), 1);
  EXPECT_EQ(on_host[1].UnusedGpus(kT0 + hours(2), minutes(61)), 0);
  EXPECT_EQ(*on_host[1].UnusedFor(kT0 + hours(2)), hours(1));
  EXPECT_EQ(HolderOf(on_host, 3), &on_host[1]);
  EXPECT_EQ(HolderOf(on_host, 2), nullptr);
}

TEST(SlurmAllocationTest, CountsTheJobsGpuHoursFromItsMinutes) {
  const auto on_host =
      JobsOnHost({Job("1", {0, 1})}, "n1",
                 {Gpu(0, observe::GpuState::kIdle, kT0), Gpu(1, observe::GpuState::kBusy, kT0)});
  std::map<core::GpuUuid, std::vector<observe::MinuteRollup>> rollups;
  for (int m = -30; m < 60; ++m) {  // minutes before the start were another job's
    for (uint32_t gpu = 0; gpu < 2; ++gpu) {
      observe::MinuteRollup r;
      r.uuid = core::GpuUuid("GPU-" + std::to_string(gpu));
      r.minute = kT0 + minutes(m);
      r.observed = minutes(1);
      if (gpu == 0) {
        r.idle = minutes(1);
      } else if (m < 30) {
        r.busy = minutes(1);
      } else {
        r.busy = r.held_idle = minutes(1);
      }
      rollups[r.uuid].push_back(r);
    }
  }
  const JobUsage usage = UsageOf(on_host[0], rollups, kT0 + hours(2));
  EXPECT_DOUBLE_EQ(usage.allocated_gpu_hours, 4.0);
  EXPECT_DOUBLE_EQ(usage.observed_gpu_hours, 2.0);
  EXPECT_DOUBLE_EQ(usage.idle_gpu_hours, 1.0);
  EXPECT_DOUBLE_EQ(usage.held_idle_gpu_hours, 0.5);
  EXPECT_DOUBLE_EQ(usage.used_gpu_hours, 0.5);
  EXPECT_DOUBLE_EQ(usage.UnusedGpuHours(), 1.5);
}

TEST(SlurmIdleAlertTest, FiresOncePerEpisodeToTheOwnerAndResolves) {
  IdleAllocationAlerts alerts({minutes(30), 2, "warning"});
  const SlurmJob job = Job("1234", {0, 1, 2, 3});
  auto at = [&](observe::GpuState third) {
    return JobsOnHost({job}, "n1",
                      {Gpu(0, observe::GpuState::kIdle, kT0), Gpu(1, observe::GpuState::kBusy, kT0),
                       Gpu(2, third, kT0), Gpu(3, observe::GpuState::kHeldIdle, kT0)});
  };
  // Two unused GPUs, but not yet for 30 minutes.
  EXPECT_TRUE(alerts.Observe(at(observe::GpuState::kIdle), kT0 + minutes(20)).empty());
  auto fired = alerts.Observe(at(observe::GpuState::kIdle), kT0 + hours(2));
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_TRUE(fired[0].firing);
  EXPECT_EQ(fired[0].rule, kIdleAllocationAlert);
  EXPECT_EQ(fired[0].job, "slurm:1234");
  EXPECT_EQ(fired[0].users, std::vector<std::string>{"alice"});
  EXPECT_EQ(fired[0].uuid, core::GpuUuid("GPU-0"));
  EXPECT_THAT(fired[0].summary, HasSubstr("Slurm job 1234 (alice, account physics, partition "
                                          "gpu) holds 4 GPUs here, 3 unused for 2h"));
  // Still true: nothing new.
  EXPECT_TRUE(alerts.Observe(at(observe::GpuState::kIdle), kT0 + hours(3)).empty());
  // One GPU left unused: below the rule's two, so resolved.
  auto busy = JobsOnHost({job}, "n1", {Gpu(0, observe::GpuState::kIdle, kT0)});
  auto resolved = alerts.Observe(busy, kT0 + hours(4));
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_FALSE(resolved[0].firing);
  EXPECT_EQ(resolved[0].ends_at, kT0 + hours(4));
  // The job gone while firing: resolved too.
  alerts.Observe(at(observe::GpuState::kIdle), kT0 + hours(5));
  auto gone = alerts.Observe({}, kT0 + hours(6));
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_FALSE(gone[0].firing);
}

// A GPU that sat idle for an hour before the job got it: the job's own
// unused time starts with the job, so its owner is not alerted at once.
TEST(SlurmIdleAlertTest, CountsOnlyTheTimeSinceTheJobGotTheGpu) {
  IdleAllocationAlerts alerts({minutes(30), 1, "warning"});
  SlurmJob job = Job("77", {0});
  job.start_time = kT0 + hours(1);
  const auto on_host = JobsOnHost({job}, "n1", {Gpu(0, observe::GpuState::kIdle, kT0)});
  EXPECT_EQ(*on_host[0].UnusedFor(kT0 + hours(1) + minutes(2)), minutes(2));
  EXPECT_TRUE(alerts.Observe(on_host, kT0 + hours(1) + minutes(2)).empty());
  EXPECT_TRUE(alerts.Firing().empty());
  EXPECT_EQ(alerts.Observe(on_host, kT0 + hours(1) + minutes(30)).size(), 1u);
  EXPECT_EQ(alerts.Firing(), std::set<std::string>{"77"});
}

}  // namespace
}  // namespace gleaner::slurm
