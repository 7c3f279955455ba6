// Container jobs with the real podman, rootless as a throwaway user, on an
// image the test builds from busybox (podman import: no registry): the
// job gets its GPU through a CDI spec, its mounts and its variables, runs
// as its user, and hears the checkpoint signal, whose exit code comes back.
// Needs root, podman and a static busybox (the test packages); skipped,
// saying why, without them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "agent/container_command.h"
#include "agent/executor.h"
#include "core/clock.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;

constexpr const char* kGpu = "GPU-0c0ffee0-1111-2222-3333-444455556666";
constexpr const char* kImage = "localhost/gleaner-test:1";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Shell(const std::string& command) { return std::system(command.c_str()) == 0; }

// Reaps until job `id` ends (podman's first start of an image takes a while).
std::optional<JobExit> WaitForEnd(Executor& executor, sched::JobId id) {
  for (int i = 0; i < 1200; ++i) {
    for (const JobExit& x : executor.Reap()) {
      if (x.id == id) return x;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

LaunchRequest Request(sched::JobId id, const std::string& log_dir, uint32_t uid,
                      std::vector<std::string> command) {
  LaunchRequest req;
  req.id = id;
  req.uid = uid;
  req.gpus = {core::GpuUuid(kGpu)};
  req.log_dir = log_dir;
  req.spec.command = std::move(command);
  req.spec.container = sched::ContainerSpec{kImage, "", {}};
  return req;
}

class ContainerJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the job runs as a throwaway user";
    auto cgroups = JobCgroups::Open("gleaner-test-" + std::to_string(getpid()));
    if (!cgroups.ok()) GTEST_SKIP() << cgroups.status().message();
    cgroups_ = std::move(cgroups).value();
    executor_.UseCgroups(*cgroups_);
    user_.emplace("gctr", true);
    ASSERT_TRUE(user_->ok());
    std::filesystem::permissions(logs_.path(), std::filesystem::perms(0755));
    std::filesystem::permissions(shared_.path(), std::filesystem::perms(0777));
    std::filesystem::permissions(tools_.path(), std::filesystem::perms(0755));
    std::filesystem::permissions(runtime_.path(), std::filesystem::perms(0711));
    // The real podman's state is where `podman import` left it.
    executor_.FindContainerToolsIn(RootProgramDirs(), "/tmp");
  }

  // A stand-in for podman or apptainer where root's own programs are: a
  // directory only root writes.
  void InstallTool(const std::string& name, const std::string& script) {
    tools_.Write(name, script);
    std::filesystem::permissions(tools_.path() / name, std::filesystem::perms(0755));
    executor_.FindContainerToolsIn({tools_.path().string()}, runtime_.path().string());
  }

  void TearDown() override {
    for (int i = 0; i < 600 && !executor_.running().empty(); ++i) {
      executor_.Reap();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (cdi_spec_) std::filesystem::remove(*cdi_spec_);
    if (user_ && user_->ok()) {
      // The user's podman pause process outlives its jobs, as it should.
      Shell("pkill -KILL -u " + user_->name() + " 2>/dev/null; sleep 0.2");
      std::filesystem::remove_all("/tmp/podman-run-" + std::to_string(user_->uid()));
    }
    if (cgroups_) {
      for (int i = 0; i < 300 && !cgroups_->RemoveBase().ok(); ++i) {
        executor_.Reap();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }

  // The user's own image, imported from a root file system of busybox; on
  // a host with cgroup v1 controllers crun refuses to run, so runc does.
  void ImportImage() {
    if (!Shell("command -v podman >/dev/null")) GTEST_SKIP() << "podman is not installed";
    if (!std::filesystem::exists("/bin/busybox")) GTEST_SKIP() << "busybox-static is not installed";
    const std::string home = user_->home();
    const std::string root = home + "/rootfs";
    std::filesystem::create_directories(root + "/bin");
    std::filesystem::copy_file("/bin/busybox", root + "/bin/busybox");
    for (const char* tool : {"sh", "cat", "echo", "id", "pwd", "sleep", "touch"}) {
      std::filesystem::create_symlink("busybox", root + "/bin/" + tool);
    }
    if (std::filesystem::exists("/sys/fs/cgroup/unified")) {
      std::filesystem::create_directories(home + "/.config/containers");
      std::ofstream(home + "/.config/containers/containers.conf")
          << "[engine]\nruntime = \"runc\"\n";
    }
    ASSERT_TRUE(Shell("tar -C " + root + " -cf " + home + "/rootfs.tar . && chown -R " +
                      user_->name() + ": " + home));
    ASSERT_TRUE(Shell("cd " + home + " && runuser -u " + user_->name() + " -- podman import " +
                      home + "/rootfs.tar " + kImage + " >/dev/null 2>&1"));
    // The import left the user's pause process: a first job finds none.
    Shell("pkill -KILL -u " + user_->name() + "; sleep 0.2");
  }

  // A CDI spec naming the test's GPU by its UUID, as nvidia-ctk names real
  // ones; what it gives the container is a variable that says so.
  void WriteCdiSpec() {
    std::filesystem::create_directories("/etc/cdi");
    cdi_spec_ = "/etc/cdi/gleaner-test-" + std::to_string(getpid()) + ".yaml";
    std::ofstream(*cdi_spec_) << "cdiVersion: \"0.5.0\"\nkind: nvidia.com/gpu\ndevices:\n"
                              << "- name: " << kGpu << "\n  containerEdits:\n    env:\n"
                              << "    - GLEANER_CDI_DEVICE=" << kGpu << "\n";
  }

  core::RealClock clock_;
  Executor executor_{clock_};
  std::optional<JobCgroups> cgroups_;
  std::optional<testing::ThrowawayUser> user_;
  std::optional<std::string> cdi_spec_;
  testing::TempDir logs_;
  testing::TempDir shared_;
  testing::TempDir tools_;    // root's: stand-ins for podman and apptainer
  testing::TempDir runtime_;  // root's: where stand-ins' runtime dirs are made
};

TEST_F(ContainerJobTest, GetsItsGpuItsMountsAndItsVariablesAsItsUser) {
  ImportImage();
  if (IsSkipped()) return;
  WriteCdiSpec();
  shared_.Write("hello", "from the host\n");
  std::filesystem::permissions(shared_.path() / "hello", std::filesystem::perms(0644));
  LaunchRequest req = Request(
      1, logs_.path().string(), user_->uid(),
      {"sh", "-c",
       "echo gpu=$CUDA_VISIBLE_DEVICES cdi=$GLEANER_CDI_DEVICE job=$GLEANER_JOB_ID var=$MY_VAR "
       "uid=$(id -u) in=$(pwd); cat hello"});
  req.spec.env = {{"MY_VAR", "set"}};
  req.spec.working_dir = "/in";
  req.spec.container->mounts = {{shared_.path().string(), "/in", true}};
  auto job = executor_.Launch(req);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const std::optional<JobExit> exit = WaitForEnd(executor_, 1);
  ASSERT_TRUE(exit.has_value());
  const std::string out = ReadAll(job->stdout_path);
  EXPECT_EQ(exit->exit_code, 0) << out << ReadAll(job->stderr_path);
  EXPECT_THAT(out, HasSubstr(std::string("gpu=") + kGpu + " cdi=" + kGpu + " job=1 var=set uid=" +
                             std::to_string(user_->uid()) + " in=/in\nfrom the host\n"));
}

TEST_F(ContainerJobTest, HearsTheCheckpointSignalAndItsExitCodeComesBack) {
  ImportImage();
  if (IsSkipped()) return;
  executor_.SimulatedGpus(true);  // no CDI spec: the container gets the UUID alone
  LaunchRequest req = Request(2, logs_.path().string(), user_->uid(),
                              {"sh", "-c",
                               "trap 'touch /out/checkpointed; exit 7' TERM; echo ready; "
                               "while :; do sleep 0.1; done"});
  req.spec.container->mounts = {{shared_.path().string(), "/out", false}};
  auto job = executor_.Launch(req);
  ASSERT_TRUE(job.ok()) << job.status().message();
  for (int i = 0; i < 1200 && ReadAll(job->stdout_path).find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_THAT(ReadAll(job->stdout_path), HasSubstr("ready")) << ReadAll(job->stderr_path);
  ASSERT_TRUE(executor_.Signal(2, SIGTERM).ok());
  const std::optional<JobExit> exit = WaitForEnd(executor_, 2);
  ASSERT_TRUE(exit.has_value());
  // Before the pause process was made first, podman's outer client ended
  // at once with 0 and the container was killed mid-checkpoint.
  EXPECT_EQ(exit->exit_code, 7) << ReadAll(job->stderr_path);
  EXPECT_TRUE(std::filesystem::exists(shared_.path() / "checkpointed"));
}

TEST_F(ContainerJobTest, APodmanThatHangsNeverHoldsUpTheDaemon) {
  // A podman that never finishes making its pause process. The launch
  // returned only after the 30 s bound when the daemon waited for it; now
  // the job's process waits.
  InstallTool("podman", "#!/bin/sh\n[ \"$1\" = unshare ] && exec sleep 600\necho ran\n");
  executor_.SimulatedGpus(true);
  LaunchRequest req = Request(5, logs_.path().string(), user_->uid(), {"true"});
  const auto start = std::chrono::steady_clock::now();
  auto job = executor_.Launch(req);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  // Ended meanwhile, the job leaves no pause step behind.
  ASSERT_TRUE(executor_.Signal(5, SIGKILL).ok());
  ASSERT_TRUE(WaitForEnd(executor_, 5).has_value());
  bool left = true;
  for (int i = 0; i < 100 && left; ++i) {
    left = Shell("pgrep -u " + user_->name() + " sleep >/dev/null");
    if (left) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(left) << "the hung pause step outlived its job";
  EXPECT_EQ(ReadAll(job->stdout_path), "");
}

TEST_F(ContainerJobTest, ApptainerRunsTheCommandAfterItsImageAsItsUser) {
  // Apptainer is not packaged for Debian 12: a stand-in prints how it was
  // called and runs what follows the image, as apptainer exec would.
  InstallTool("apptainer",
              "#!/bin/sh\necho \"apptainer $*\"\n"
              "while [ \"$1\" != /images/t.sif ]; do shift; done\nshift\nexec \"$@\"\n");
  LaunchRequest req = Request(3, logs_.path().string(), user_->uid(),
                              {"sh", "-c", "echo gpu=$CUDA_VISIBLE_DEVICES uid=$(id -u)"});
  req.spec.container = sched::ContainerSpec{"", "/images/t.sif", {{"/a", "/b", true}}};
  auto job = executor_.Launch(req);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const std::optional<JobExit> exit = WaitForEnd(executor_, 3);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0) << ReadAll(job->stderr_path);
  EXPECT_EQ(
      ReadAll(job->stdout_path),
      "apptainer exec --nv --bind /a:/b:ro /images/t.sif sh -c echo gpu=$CUDA_VISIBLE_DEVICES "
      "uid=$(id -u)\ngpu=" +
          std::string(kGpu) + " uid=" + std::to_string(user_->uid()) + "\n");
}

// Before: the pause step ran the first `podman` on the job's own PATH, as
// the user, before the job joined its cgroup, so what it started outlived
// the job outside its limits.
TEST_F(ContainerJobTest, TheUsersOwnPodmanIsNeverRunAndThePauseStepIsInTheJobsCgroup) {
  const std::string ran = (shared_.path() / "users-podman-ran").string();
  shared_.Write("podman", "#!/bin/sh\ntouch " + ran + "\n");
  std::filesystem::permissions(shared_.path() / "podman", std::filesystem::perms(0755));
  const std::string pause_cgroup = (shared_.path() / "pause-cgroup").string();
  InstallTool("podman", "#!/bin/sh\nif [ \"$1\" = unshare ]; then cat /proc/self/cgroup >" +
                            pause_cgroup +
                            "; exit 0; fi\necho \"trusted $1 runtime=$XDG_RUNTIME_DIR\"\n");
  executor_.SimulatedGpus(true);
  LaunchRequest req = Request(6, logs_.path().string(), user_->uid(), {"true"});
  req.spec.env = {{"PATH", shared_.path().string() + ":/usr/bin:/bin"}};
  auto job = executor_.Launch(req);
  ASSERT_TRUE(job.ok()) << job.status().message();
  const std::optional<JobExit> exit = WaitForEnd(executor_, 6);
  ASSERT_TRUE(exit.has_value());
  EXPECT_EQ(exit->exit_code, 0) << ReadAll(job->stderr_path);
  const std::string runtime =
      runtime_.path().string() + "/podman-run-" + std::to_string(user_->uid());
  EXPECT_EQ(ReadAll(job->stdout_path), "trusted run runtime=" + runtime + "\n");
  EXPECT_FALSE(std::filesystem::exists(ran)) << "the user's podman ran as root's";
  ASSERT_FALSE(job->cgroup.empty());
  const std::string leaf = job->cgroup.substr(job->cgroup.rfind('/'));
  EXPECT_THAT(ReadAll(pause_cgroup), HasSubstr(leaf)) << "the pause step ran outside the job";
  // The runtime directory is the user's alone.
  struct stat st {};
  ASSERT_EQ(lstat(runtime.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_uid, user_->uid());
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(ContainerJobTest, APodmanOnlyInAPlaceOthersWriteIsRefused) {
  std::filesystem::permissions(tools_.path(), std::filesystem::perms(0777));
  tools_.Write("podman", "#!/bin/sh\necho ran\n");
  std::filesystem::permissions(tools_.path() / "podman", std::filesystem::perms(0755));
  executor_.FindContainerToolsIn({tools_.path().string()}, runtime_.path().string());
  executor_.SimulatedGpus(true);
  auto job = executor_.Launch(Request(7, logs_.path().string(), user_->uid(), {"true"}));
  EXPECT_EQ(job.status().code(), core::StatusCode::kNotFound);
  EXPECT_THAT(job.status().message(),
              HasSubstr("podman is not installed where root's programs are"));
  EXPECT_THAT(job.status().message(), HasSubstr("can be written by others"));
  EXPECT_TRUE(executor_.running().empty());
}

// Before: /tmp/podman-run-UID was used as found, so another user who made
// it first (or a link there) broke the user's container jobs, or read them.
TEST(ContainerRuntimeDirTest, WhatAnotherUserPutThereIsMovedAsideAndMadeAnew) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(01777));
  const std::string base = dir.path().string();
  const auto mine = [](const std::string& path, uint32_t uid) {
    struct stat st {};
    return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid &&
           (st.st_mode & 07777) == 0700;
  };
  // A link where the user's directory would be: moved aside, not followed.
  std::filesystem::create_directory_symlink("/etc", base + "/podman-run-4242");
  auto linked = ContainerRuntimeDir(4242, 4242, base);
  ASSERT_TRUE(linked.ok()) << linked.status().message();
  EXPECT_EQ(*linked, base + "/podman-run-4242");
  EXPECT_TRUE(mine(*linked, 4242));
  struct stat etc {};
  ASSERT_EQ(stat("/etc", &etc), 0);
  EXPECT_EQ(etc.st_uid, 0u) << "the link was followed";
  // Another user's directory: moved aside, with what it holds.
  std::filesystem::create_directory(base + "/podman-run-4343");
  std::ofstream(base + "/podman-run-4343/planted") << "x";
  chown((base + "/podman-run-4343").c_str(), 4444, 4444);
  chmod((base + "/podman-run-4343").c_str(), 0777);
  auto taken = ContainerRuntimeDir(4343, 4343, base);
  ASSERT_TRUE(taken.ok()) << taken.status().message();
  EXPECT_TRUE(mine(*taken, 4343));
  EXPECT_FALSE(std::filesystem::exists(*taken + "/planted"));
  // The user's own is kept, made private.
  std::ofstream(*taken + "/state") << "x";
  chmod(taken->c_str(), 0755);
  EXPECT_TRUE(ContainerRuntimeDir(4343, 4343, base).ok());
  EXPECT_TRUE(mine(*taken, 4343));
  EXPECT_TRUE(std::filesystem::exists(*taken + "/state"));
  // A base others could replace files in is refused.
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0777));
  EXPECT_THAT(ContainerRuntimeDir(4343, 4343, base).status().message(),
              HasSubstr("where users cannot replace others' files"));
}

TEST(ContainerJobRefusalTest, WithoutACgroupOfItsOwnAContainerJobIsRefused) {
  core::RealClock clock;
  Executor executor(clock);
  executor.SimulatedGpus(true);
  testing::TempDir logs;
  auto job = executor.Launch(Request(4, logs.path().string(), getuid(), {"true"}));
  EXPECT_EQ(job.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(job.status().message(), HasSubstr("no cgroup of their own"));
  EXPECT_TRUE(executor.running().empty());
}

}  // namespace
}  // namespace gleaner::agent
