// Where a process runs, from its cgroup; when it started; whether gleaner
// started it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

#include "agent/process_info.h"
#include "core/clock.h"
#include "testing/temp_dir.h"

namespace gleaner::agent {
namespace {

const std::string kDockerId(64, 'a');

TEST(CgroupTest, DockerSystemdDriver) {
  CgroupPlacement p = ParseCgroup("0::/system.slice/docker-" + kDockerId + ".scope\n");
  EXPECT_EQ(p.container_id, kDockerId);
  EXPECT_EQ(p.systemd_unit, "docker-" + kDockerId + ".scope");
}

TEST(CgroupTest, DockerCgroupfsDriverV1) {
  CgroupPlacement p =
      ParseCgroup("12:devices:/docker/" + kDockerId + "\n4:memory:/docker/" + kDockerId + "\n");
  EXPECT_EQ(p.container_id, kDockerId);
  EXPECT_EQ(p.systemd_unit, "");
}

TEST(CgroupTest, KubernetesPodAndContainerd) {
  const std::string id(64, 'b');
  CgroupPlacement p = ParseCgroup(
      "0::/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod1b2c3d4e_5f60_4718_9abc_def012345678.slice/cri-containerd-" +
      id + ".scope\n");
  EXPECT_EQ(p.container_id, id);
  EXPECT_EQ(p.kubernetes_pod_uid, "1b2c3d4e-5f60-4718-9abc-def012345678");
}

TEST(CgroupTest, SlurmJobAndSystemdService) {
  EXPECT_EQ(
      ParseCgroup("0::/system.slice/slurmstepd.scope/job_81234/step_0/user/task_0\n").slurm_job_id,
      "81234");
  EXPECT_EQ(ParseCgroup("4:memory:/slurm/uid_1000/job_42/step_batch\n").slurm_job_id, "42");
  // A cgroup a user named so, in the part of the tree delegated to them.
  EXPECT_EQ(ParseCgroup("0::/user.slice/user-1000.slice/user@1000.service/app.slice/job_99\n")
                .slurm_job_id,
            "");
  CgroupPlacement service = ParseCgroup("0::/system.slice/jupyterhub.service\n");
  EXPECT_EQ(service.systemd_unit, "jupyterhub.service");
  EXPECT_EQ(service.container_id, "");
  EXPECT_EQ(ParseCgroup("0::/user.slice/user-1000.slice/session-4.scope\n").systemd_unit,
            "session-4.scope");
  EXPECT_EQ(ParseCgroup("garbage").container_id, "");
}

TEST(ProcfsInspectorTest, StartTimeCgroupAndGleanerJobs) {
  testing::TempDir proc;
  proc.Write("stat", "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n");
  proc.Write("300/status", "Name:\tpython\nUid:\t1000\t1000\t1000\t1000\n");
  proc.Write("300/cmdline", std::string("python\0job.py\0", 14));
  // Field 22 (start time) = 500 ticks after boot; the name has spaces and ')'.
  proc.Write("300/stat",
             "300 (my (odd) name) S 1 300 300 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0\n");
  proc.Write("300/cgroup", "0::/system.slice/docker-" + kDockerId + ".scope\n");
  proc.Write("300/environ", std::string("PATH=/bin\0GLEANER_JOB_ID=j-17\0", 30));
  ProcfsInspector inspector(proc.path().string());
  auto p = inspector.Inspect(300);
  ASSERT_TRUE(p.has_value());
  ASSERT_TRUE(p->started_at.has_value());
  const long hz = sysconf(_SC_CLK_TCK);
  EXPECT_EQ(core::ToUnixMicros(*p->started_at),
            int64_t{1'700'000'000} * 1'000'000 + 500 * 1'000'000 / hz);
  EXPECT_EQ(p->container_id, kDockerId);
  EXPECT_TRUE(p->gleaner_job);

  proc.Write("301/status", "Name:\tx\nUid:\t0\t0\t0\t0\n");
  auto bare = inspector.Inspect(301);  // no stat, cgroup or environ: still answers
  ASSERT_TRUE(bare.has_value());
  EXPECT_FALSE(bare->started_at.has_value());
  EXPECT_FALSE(bare->gleaner_job);
}

TEST(ProcfsInspectorTest, ThisProcessStartedRecently) {
  ProcfsInspector inspector;
  auto self = inspector.Inspect(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(self.has_value());
  ASSERT_TRUE(self->started_at.has_value());
  const auto age = core::RealClock().Now() - *self->started_at;
  EXPECT_GE(age, core::Seconds(-2));
  EXPECT_LT(age, core::Seconds(600));
  // Its session, which its jobs' processes could never join; a session led
  // from outside this pid namespace reads as 0 and is no session to match.
  const pid_t session = getsid(0);
  if (session > 0) {
    EXPECT_EQ(self->session_id, static_cast<uint32_t>(session));
  } else {
    EXPECT_FALSE(self->session_id.has_value());
  }
}

TEST(ProcessCpuTimeTest, RisesAsTheProcessComputesAndIsGoneWithIt) {
  const auto before = ProcessCpuTime(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(before.has_value());
  volatile double x = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  const auto after = ProcessCpuTime(static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(after.has_value());
  EXPECT_GE(*after - *before, core::Duration(50'000));
  EXPECT_FALSE(ProcessCpuTime(0).has_value());

  testing::TempDir proc;
  // utime 250 and stime 50 ticks; a command name with spaces and ')'.
  proc.Write("7/stat", "7 (a) b) S 1 7 7 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 500 1000 10\n");
  const long hz = sysconf(_SC_CLK_TCK);
  EXPECT_EQ(ProcessCpuTime(7, proc.path().string()), core::Duration(300 * 1'000'000 / hz));
  proc.Write("8/stat", "8 (x) S 1 8 8 0 -1 4194560 100 0 0 0 -5 50\n");
  EXPECT_FALSE(ProcessCpuTime(8, proc.path().string()).has_value());
}

}  // namespace
}  // namespace gleaner::agent
