// The bridge's runner against stand-ins for sbatch and scancel (scripts
// that record what they were asked) and Slurm's job list handed in: the
// command it submits, how Slurm's states become exits, and which GPUs
// Slurm's other jobs keep from being lent. tests/slurm/slurm_cluster_test.cc
// runs it against a real Slurm.
#include "agent/slurm_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testing/temp_dir.h"

namespace gleaner::agent {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// Splits text at NULs.
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = text.find('\0', start)) != std::string::npos; start = end + 1) {
    out.push_back(text.substr(start, end - start));
  }
  return out;
}

slurm::SlurmJob Job(const std::string& id, const std::string& state, const std::string& name,
                    const std::string& comment) {
  slurm::SlurmJob j;
  j.id = id;
  j.state = state;
  j.name = name;
  j.comment = comment;
  j.partition = "scavenger";
  j.user = "alice";
  return j;
}

class SlurmRunnerTest : public ::testing::Test {
 protected:
  SlurmRunnerTest() {
    dir_.Write("sbatch", "#!/bin/sh\nprintf '%s\\0' \"$@\" > " + dir_.path().string() +
                             "/sbatch.args\necho 4242\n");
    dir_.Write("scancel", "#!/bin/sh\necho \"$@\" >> " + dir_.path().string() + "/scancel.log\n");
    chmod((dir_.path() / "sbatch").c_str(), 0755);
    chmod((dir_.path() / "scancel").c_str(), 0755);
    settings_.enabled = true;
    settings_.poll_interval = core::Seconds(1);
    settings_.bridge.enabled = true;
    settings_.bridge.partition = "scavenger";
    settings_.sbatch = (dir_.path() / "sbatch").string();
    settings_.scancel = (dir_.path() / "scancel").string();
  }

  SlurmRunner Runner() {
    return SlurmRunner(
        settings_, "node1",
        [this]() -> core::Result<slurm::SlurmJobsDocument> {
          if (!slurm_error_.empty()) return core::Unavailable(slurm_error_);
          return slurm_;
        },
        clock_);
  }

  LaunchRequest Request() const {
    LaunchRequest r;
    r.id = 7;
    r.uid = getuid();
    r.spec.command = {"python", "train.py", "--note", "it's $HOME"};
    r.spec.env = {{"LR", "3e-4"}};
    r.spec.working_dir = "/tmp";
    r.gpus = {core::GpuUuid("GPU-a"), core::GpuUuid("GPU-b")};
    r.log_dir = (dir_.path() / "logs").string();
    return r;
  }

  // Time passes beyond the poll interval, so the next Reap reads Slurm.
  void Later() { clock_.Advance(core::Seconds(2)); }

  testing::TempDir dir_;
  slurm::SlurmSettings settings_;
  slurm::SlurmJobsDocument slurm_;
  std::string slurm_error_;
  core::ManualClock clock_{core::FromUnixMicros(1'700'000'000'000'000)};
};

TEST_F(SlurmRunnerTest, SubmitsThePinnedQuotedJobAsItsUser) {
  SlurmRunner runner = Runner();
  auto job = runner.Launch(Request());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->slurm_job_id, "4242");
  EXPECT_EQ(job->slurm_state, "Slurm job 4242 submitted to partition scavenger on node1");
  EXPECT_EQ(runner.running().at(7).slurm_job_id, "4242");
  const std::vector<std::string> args = Words(testing::Slurp(dir_.path() / "sbatch.args"));
  EXPECT_THAT(args, Contains("--partition=scavenger"));
  EXPECT_THAT(args, Contains("--nodelist=node1"));
  EXPECT_THAT(args, Contains("--gres=gpu:2"));
  EXPECT_THAT(args, Contains("--job-name=gleaner-7"));
  EXPECT_THAT(args, Contains("--comment=gleaner-bridge node=node1"));
  EXPECT_THAT(args, Contains("--chdir=/tmp"));
  EXPECT_THAT(args, Contains("--requeue"));
  EXPECT_THAT(args, Contains("--output=" + Request().log_dir + "/7.out"));
  EXPECT_THAT(args, Contains("--propagate=NONE"));
  // The spec's variables first: gleaner's own come after and win.
  EXPECT_THAT(args, Contains("--wrap=export LR='3e-4'\nexport GLEANER_JOB_ID=7\n"
                             "exec 'python' 'train.py' '--note' 'it'\\''s $HOME'"));
  // The logs exist before Slurm appends to them.
  EXPECT_TRUE(std::filesystem::exists(Request().log_dir + "/7.out"));

  // A variable the shell cannot name is refused, not mangled.
  LaunchRequest bad = Request();
  bad.id = 8;
  bad.spec.env = {{"A-B", "1"}};
  EXPECT_THAT(runner.Launch(bad).status().message(), HasSubstr("A-B"));
  // Nor may a job choose its GPUs or pose as another gleaner job.
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "GLEANER_JOB_ID", "SLURM_JOB_ID"}) {
    bad.spec.env = {{name, "0"}};
    EXPECT_THAT(runner.Launch(bad).status().message(), HasSubstr("set by Slurm or gleaner"));
  }
  EXPECT_FALSE(std::filesystem::exists(Request().log_dir + "/8.out"));
}

TEST_F(SlurmRunnerTest, SlurmsStatesBecomeWhatTheAgentReports) {
  SlurmRunner runner = Runner();
  ASSERT_TRUE(runner.Launch(Request()).ok());
  slurm::SlurmJob mine = Job("4242", "PENDING", "gleaner-7", runner.Tag());
  mine.state_reason = "Resources";
  slurm_.jobs = {mine};
  EXPECT_TRUE(runner.Reap().empty());
  EXPECT_EQ(runner.running().at(7).slurm_state,
            "Slurm job 4242 PENDING (Resources) in partition scavenger");

  slurm_.jobs[0].state = "RUNNING";
  Later();
  EXPECT_TRUE(runner.Reap().empty());
  EXPECT_EQ(runner.running().at(7).slurm_state,
            "Slurm job 4242 RUNNING on node1 in partition scavenger");

  // Requeued by Slurm: reported as vacated, and taken out of Slurm's queue.
  slurm_.jobs[0].state = "PENDING";
  slurm_.jobs[0].restart_count = 1;
  slurm_.jobs[0].state_reason = "BeginTime";
  Later();
  std::vector<JobExit> exits = runner.Reap();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_THAT(exits[0].requeued_for, HasSubstr("requeued by Slurm (job 4242 PENDING, BeginTime)"));
  EXPECT_TRUE(runner.running().empty());
  EXPECT_EQ(testing::Slurp(dir_.path() / "scancel.log"), "4242\n");
  // Slurm's own jobs get the GPUs it preempted for: nothing is lent a while.
  gpu::GpuSnapshot gpu;
  EXPECT_THAT(runner.WhyNotLendable(gpu), HasSubstr("Slurm took back a gleaner job"));
  clock_.Advance(core::Seconds(11));
  EXPECT_EQ(runner.WhyNotLendable(gpu), "");
}

TEST_F(SlurmRunnerTest, AJobSlurmWillNotStartGoesBackToGleaner) {
  SlurmRunner runner = Runner();
  ASSERT_TRUE(runner.Launch(Request()).ok());
  slurm::SlurmJob mine = Job("4242", "PENDING", "gleaner-7", runner.Tag());
  mine.state_reason = "Resources";
  slurm_.jobs = {mine};
  EXPECT_TRUE(runner.Reap().empty());
  // Not started: asked to leave, it is cancelled, not signalled.
  ASSERT_TRUE(runner.Signal(7, SIGTERM).ok());
  EXPECT_EQ(testing::Slurp(dir_.path() / "scancel.log"), "4242\n");
  clock_.Advance(core::Seconds(11));
  std::vector<JobExit> exits = runner.Reap();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_THAT(
      exits[0].requeued_for,
      HasSubstr("Slurm did not start it on node1 within 10s (job 4242 PENDING, Resources)"));
}

TEST_F(SlurmRunnerTest, HowAJobEndedInSlurm) {
  SlurmRunner runner = Runner();
  ASSERT_TRUE(runner.Launch(Request()).ok());
  slurm::SlurmJob done = Job("4242", "FAILED", "gleaner-7", runner.Tag());
  done.exit_code = 3;
  slurm_.jobs = {done};
  std::vector<JobExit> exits = runner.Reap();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 3);
  EXPECT_TRUE(exits[0].requeued_for.empty());

  // Slurm forgot it (past MinJobAge): ended, how unknown.
  ASSERT_TRUE(runner.Launch(Request()).ok());
  slurm_.jobs.clear();
  Later();
  exits = runner.Reap();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_TRUE(exits[0].status_unknown);

  // Slurm does not answer: nothing is taken for ended.
  ASSERT_TRUE(runner.Launch(Request()).ok());
  slurm_error_ = "squeue --json failed (exit 1): Unable to contact slurm controller";
  Later();
  EXPECT_TRUE(runner.Reap().empty());
  EXPECT_EQ(runner.running().size(), 1u);
}

TEST_F(SlurmRunnerTest, SignalsGoThroughScancel) {
  SlurmRunner runner = Runner();
  ASSERT_TRUE(runner.Launch(Request()).ok());
  slurm_.jobs = {Job("4242", "RUNNING", "gleaner-7", runner.Tag())};
  runner.Reap();
  ASSERT_TRUE(runner.Signal(7, SIGUSR1).ok());
  ASSERT_TRUE(runner.Signal(7, SIGKILL).ok());
  EXPECT_EQ(testing::Slurp(dir_.path() / "scancel.log"),
            "--signal=" + std::to_string(SIGUSR1) + " --full 4242\n4242\n");
  EXPECT_FALSE(runner.Signal(99, SIGKILL).ok());
}

TEST_F(SlurmRunnerTest, GpusOtherSlurmJobsHoldAreNotLent) {
  SlurmRunner runner = Runner();
  gpu::GpuSnapshot gpu;
  EXPECT_EQ(runner.WhyNotLendable(gpu), "Slurm not asked yet");
  ASSERT_TRUE(runner.Launch(Request()).ok());  // Slurm job 4242
  slurm::SlurmJob theirs = Job("10", "RUNNING", "train", "");
  theirs.gpus_by_node["node1"] = {1};
  slurm::SlurmJob elsewhere = Job("11", "RUNNING", "train", "");
  elsewhere.gpus_by_node["node2"] = {0};
  slurm::SlurmJob ours = Job("4242", "RUNNING", "gleaner-7", runner.Tag());
  ours.gpus_by_node["node1"] = {2};
  // A comment is anyone's to write: it makes no job gleaner's.
  slurm::SlurmJob posing = Job("13", "RUNNING", "gleaner-3", runner.Tag());
  posing.gpus_by_node["node1"] = {3};
  slurm_.jobs = {theirs, elsewhere, ours, posing};
  runner.Reap();
  gpu.index = 3;
  EXPECT_EQ(runner.WhyNotLendable(gpu), "allocated to Slurm job 13 of alice");
  gpu.index = 1;
  EXPECT_EQ(runner.WhyNotLendable(gpu), "allocated to Slurm job 10 of alice");
  gpu.index = 0;
  EXPECT_EQ(runner.WhyNotLendable(gpu), "");
  gpu.index = 2;  // gleaner's own Slurm job: lent already, by gleaner
  EXPECT_EQ(runner.WhyNotLendable(gpu), "");
  // A job Slurm's answer held but that could not be read: nothing is lent.
  slurm_.skipped = {"job 14: it lists 2 GRES details for 1 nodes"};
  Later();
  runner.Reap();
  EXPECT_THAT(runner.WhyNotLendable(gpu), HasSubstr("could not be read: job 14"));
  slurm_error_ = "slurmrestd answered 500";
  Later();
  runner.Reap();
  EXPECT_THAT(runner.WhyNotLendable(gpu), HasSubstr("Slurm does not answer"));
}

TEST_F(SlurmRunnerTest, TakesBackItsOwnJobsAfterARestartAndCancelsLeftovers) {
  SlurmRunner runner = Runner();
  slurm_.jobs = {Job("50", "RUNNING", "gleaner-7", runner.Tag()),
                 Job("51", "PENDING", "gleaner-8", runner.Tag()),
                 Job("52", "RUNNING", "someone-else", "")};
  EXPECT_TRUE(runner.Adopt({7, std::nullopt, std::nullopt, "50", "/tmp"}).ok());
  // A Slurm job that is not this gleaner job's is not taken.
  EXPECT_FALSE(runner.Adopt({9, std::nullopt, std::nullopt, "52", "/tmp"}).ok());
  runner.SweepLeftovers();
  // Job 8's Slurm job, which no job claims, is cancelled; no one else's.
  EXPECT_EQ(testing::Slurp(dir_.path() / "scancel.log"), "51\n");
  // One that appears later (an sbatch that timed out after Slurm took the
  // job) is cancelled at the next read.
  slurm_.jobs[1].state = "CANCELLED";
  slurm_.jobs.push_back(Job("53", "PENDING", "gleaner-9", runner.Tag()));
  Later();
  runner.Reap();
  EXPECT_EQ(testing::Slurp(dir_.path() / "scancel.log"), "51\n53\n");
}

}  // namespace
}  // namespace gleaner::agent
