// gleaner beside a real Slurm: munged, slurmctld, slurmd with fake GPU
// devices and slurmrestd with JWT, started by the test. A job holds two GPUs
// the (fake) driver shows at 0 %; gleaner must name it, its user and account
// in `gleaner gpus`, `gleaner slurm jobs` and an alert, through squeue and
// through slurmrestd, and say clearly what is wrong when Slurm will not answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "agent/process_info.h"
#include "store/sqlite_store.h"
#include "testing/gleaner_up.h"
#include "testing/http_receiver.h"
#include "testing/local_slurm.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"

namespace gleaner {
namespace {

using nlohmann::json;
using testing::Gleaner;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Outcome;

// Four idle GPUs, no process on any: what a job that never touches its
// allocation looks like to the driver.
constexpr const char* kFourIdleGpus = R"j({
  "name": "slurm-node",
  "gpus": [
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920}
  ]
})j";

// Polls `done` every 100 ms for up to `seconds`.
template <typename F>
bool WaitUntil(double seconds, F done) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1e3));
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

class SlurmClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!slurm_.skip_reason().empty()) GTEST_SKIP() << slurm_.skip_reason();
    ASSERT_EQ(slurm_.error(), "");
    ASSERT_TRUE(user_.ok()) << "useradd failed";
    scenario_ = data_.Write("scenario.json", kFourIdleGpus);
  }

  // Submits `sleep 600` holding `gpus` GPUs as the throwaway user and
  // waits until it runs; its job id.
  std::string SubmitIdleJob(int gpus, const std::string& partition = "scavenger") {
    const std::string out =
        slurm_.Run("sbatch --parsable -p " + partition + " --gres=gpu:" + std::to_string(gpus) +
                       " -A research -J notebook -o /dev/null --wrap 'sleep 600'",
                   user_.name());
    const std::string id = out.substr(0, out.find_first_of(";\n"));
    EXPECT_FALSE(id.empty()) << out;
    EXPECT_TRUE(WaitUntil(10, [&] {
      return slurm_.Run("squeue -h -j " + id + " -o %T").find("RUNNING") != std::string::npos;
    })) << slurm_.Run("squeue");
    return id;
  }

  void WriteConfig(const std::string& extra) {
    data_.Write("gleaner.toml", "[sampling]\ninterval_s = 0.2\n[idle]\nidle_after_s = 1\n" +
                                    std::string("[slurm]\nenabled = true\nconf = \"") +
                                    slurm_.conf() + "\"\nnode = \"" + slurm_.node() +
                                    "\"\npoll_interval_s = 1\n" + extra);
  }

  std::string Flags() const {
    return " --fake " + scenario_ + " --data-dir " + data_.path().string();
  }

  testing::LocalSlurm slurm_;
  testing::ThrowawayUser user_{"glsl"};
  testing::TempDir data_;
  std::string scenario_;
};

TEST_F(SlurmClusterTest, AJobHoldingIdleGpusIsNamedInGpusSlurmJobsAndAnAlert) {
  const std::string id = SubmitIdleJob(2);
  testing::HttpReceiver receiver;
  WriteConfig("idle_alert_after_s = 0\n[alerts]\nwebhook_url = \"" + receiver.url() + "\"\n");

  // gleaner gpus: the two allocated GPUs (GRES indices 0 and 1) name the job.
  Outcome gpus = Gleaner("gpus --json" + Flags());
  ASSERT_EQ(gpus.rc, 0) << gpus.err;
  const json doc = json::parse(gpus.out);
  EXPECT_EQ(doc["slurm"]["node"], slurm_.node());
  EXPECT_EQ(doc["slurm"]["error"], nullptr);
  for (size_t i : {size_t{0}, size_t{1}}) {
    const json& job = doc["gpus"][i]["slurm_job"];
    ASSERT_TRUE(job.is_object()) << doc["gpus"][i].dump();
    EXPECT_EQ(job["id"], id);
    EXPECT_EQ(job["user"], user_.name());
    EXPECT_EQ(job["account"], "research");
    EXPECT_EQ(job["partition"], "scavenger");
    EXPECT_EQ(job["gpu_count"], 2);
  }
  EXPECT_EQ(doc["gpus"][2]["slurm_job"], nullptr);
  EXPECT_EQ(doc["gpus"][3]["slurm_job"], nullptr);
  Outcome table = Gleaner("gpus" + Flags());
  EXPECT_THAT(table.out, HasSubstr("slurm job " + id + " " + user_.name() + "/research"));

  // gleaner monitor: the alert goes to the log and the webhook, labelled with
  // the job and its owner.
  Outcome monitor = Gleaner("monitor --for 4" + Flags());
  ASSERT_EQ(monitor.rc, 0) << monitor.err << monitor.out;
  EXPECT_THAT(monitor.out, HasSubstr("alert firing SlurmJobGpusIdle"));
  EXPECT_THAT(monitor.out,
              HasSubstr("Slurm job " + id + " (" + user_.name() +
                        ", account research, partition scavenger) holds 2 GPUs here, 2 unused"));
  ASSERT_TRUE(receiver.WaitFor(1, 5));
  const json hook = json::parse(receiver.bodies().at(0));
  EXPECT_EQ(hook["alerts"][0]["labels"]["alertname"], "SlurmJobGpusIdle");
  EXPECT_THAT(receiver.bodies().at(0), HasSubstr(user_.name()));

  // gleaner slurm jobs: the job, its user and account, from the verdicts the
  // monitor stored.
  Outcome jobs = Gleaner("slurm jobs --json --data-dir " + data_.path().string());
  ASSERT_EQ(jobs.rc, 0) << jobs.err;
  const json report = json::parse(jobs.out);
  ASSERT_EQ(report["jobs"].size(), 1u) << jobs.out;
  EXPECT_EQ(report["jobs"][0]["id"], id);
  EXPECT_EQ(report["jobs"][0]["user"], user_.name());
  EXPECT_EQ(report["jobs"][0]["unused_gpus"], 2);
  EXPECT_EQ(report["by_account"][0]["key"], "research");
  EXPECT_EQ(report["by_user"][0]["key"], user_.name());

  // The job's process: proctrack/linuxproc gives it no cgroup, so the id comes
  // from its environment, which root reads.
  const std::string pids = slurm_.Run("scontrol listpids " + id);
  bool found = false;
  std::istringstream lines(pids);
  std::string line;
  const agent::ProcfsInspector inspector;
  while (std::getline(lines, line)) {
    const uint32_t pid = static_cast<uint32_t>(std::atol(line.c_str()));
    if (pid == 0) continue;
    const auto info = inspector.Inspect(pid);
    if (info && info->user == user_.name()) {
      EXPECT_EQ(info->slurm_job_id, id);
      found = true;
    }
  }
  EXPECT_TRUE(found) << pids;
  slurm_.Run("scancel " + id);
}

TEST_F(SlurmClusterTest, AnIdleActionCancelsTheJobAfterItsOwnerWasAlerted) {
  const std::string id = SubmitIdleJob(2);
  WriteConfig("idle_alert_after_s = 0\nidle_action = \"cancel\"\nidle_action_after_s = 0\n");
  Outcome monitor = Gleaner("monitor --for 3" + Flags());
  ASSERT_EQ(monitor.rc, 0) << monitor.err << monitor.out;
  EXPECT_THAT(monitor.out, HasSubstr("alert firing SlurmJobGpusIdle"));
  EXPECT_THAT(monitor.out, HasSubstr("slurm: Slurm job " + id + " of " + user_.name() +
                                     ", account research: all 2 GPUs unused for"));
  EXPECT_THAT(monitor.out, HasSubstr("; cancelled"));
  EXPECT_TRUE(WaitUntil(10, [&] {
    return slurm_.Run("squeue -h -j " + id + " -t RUNNING").find(id) == std::string::npos;
  })) << slurm_.Run("squeue");
  // The action is in the history, with the job's owner.
  auto history = store::SqliteStore::Open(data_.path().string() + "/gleaner.db");
  ASSERT_TRUE(history.ok()) << history.status().message();
  store::EventQuery q;
  q.kind = "slurm_cancelled";
  auto events = (*history)->Events(q);
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->at(0).user, user_.name());
  EXPECT_EQ(events->at(0).actor, "gleaner");
  EXPECT_EQ(events->at(0).gpus.size(), 2u);
  EXPECT_THAT(events->at(0).detail, HasSubstr("Slurm job " + id));
}

// A user's job that computes at once, on GPUs that sat idle before it
// started, is never touched: its idleness is its own, not the GPU's.
TEST_F(SlurmClusterTest, AJobThatComputesAtOnceOnLongIdleGpusIsNeverActedOn) {
  // Idle from the daemon's start; computing from 12 s. The job starts at
  // about 9 s, on GPUs idle for 8 s, past the 5 s of the rules.
  scenario_ = data_.Write("scenario.json", R"j({
  "name": "slurm-node",
  "gpus": [
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
     "timeline": [{"at_s": 0}, {"at_s": 12, "utilization_gpu_pct": 95}]},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
     "timeline": [{"at_s": 0}, {"at_s": 12, "utilization_gpu_pct": 95}]}
  ]
})j");
  WriteConfig("idle_alert_after_s = 5\nidle_action = \"cancel\"\nidle_action_after_s = 5\n");
  auto monitor =
      std::async(std::launch::async, [&] { return Gleaner("monitor --for 18" + Flags()); });
  std::this_thread::sleep_for(std::chrono::seconds(9));
  const std::string id = SubmitIdleJob(2);
  const Outcome out = monitor.get();
  ASSERT_EQ(out.rc, 0) << out.err << out.out;
  EXPECT_THAT(out.out, Not(HasSubstr("alert firing SlurmJobGpusIdle"))) << out.out;
  EXPECT_THAT(out.out, Not(HasSubstr("slurm: Slurm job " + id))) << out.out;
  EXPECT_THAT(slurm_.Run("squeue -h -j " + id + " -o %T"), HasSubstr("RUNNING"));
  slurm_.Run("scancel " + id);
}

TEST_F(SlurmClusterTest, ThroughSlurmrestdWithAToken) {
  const std::string id = SubmitIdleJob(1);
  std::string token = slurm_.Run("scontrol token username=root lifespan=600");
  token = token.substr(token.find('=') + 1);
  while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
  const std::string token_file = data_.Write("slurm.token", token);
  WriteConfig("slurmrestd = \"" + slurm_.restd_url() + "\"\ntoken_file = \"" + token_file + "\"\n");

  Outcome jobs = Gleaner("slurm jobs --json --data-dir " + data_.path().string());
  ASSERT_EQ(jobs.rc, 0) << jobs.err;
  const json report = json::parse(jobs.out);
  ASSERT_EQ(report["jobs"].size(), 1u) << jobs.out;
  EXPECT_EQ(report["jobs"][0]["id"], id);
  EXPECT_EQ(report["jobs"][0]["user"], user_.name());
  EXPECT_EQ(report["jobs"][0]["account"], "research");

  // A wrong token: a clear error naming the token, from the command; `gpus`
  // still shows the GPUs and says what Slurm answered.
  data_.Write("slurm.token", "not-a-token");
  Outcome refused = Gleaner("slurm jobs --data-dir " + data_.path().string());
  EXPECT_NE(refused.rc, 0);
  EXPECT_THAT(refused.err, HasSubstr("token"));
  Outcome gpus = Gleaner("gpus --json" + Flags());
  ASSERT_EQ(gpus.rc, 0) << gpus.err;
  const json doc = json::parse(gpus.out);
  EXPECT_EQ(doc["gpus"].size(), 4u);
  EXPECT_THAT(doc["slurm"]["error"].get<std::string>(), HasSubstr("token"));
  slurm_.Run("scancel " + id);
}

TEST_F(SlurmClusterTest, MonitoringGoesOnWhileSlurmIsDown) {
  WriteConfig("timeout_s = 1\n");
  // The controller stops: squeue fails; the monitor says so once and goes on
  // judging the GPUs.
  slurm_.Run("kill $(cat " + slurm_.dir() + "/slurmctld.pid)");
  Outcome monitor = Gleaner("monitor --for 2" + Flags());
  ASSERT_EQ(monitor.rc, 0) << monitor.err << monitor.out;
  EXPECT_THAT(monitor.out, HasSubstr("slurm: "));
  EXPECT_THAT(monitor.out, HasSubstr("-> idle"));
  Outcome gpus = Gleaner("gpus --json" + Flags());
  ASSERT_EQ(gpus.rc, 0) << gpus.err;
  EXPECT_NE(json::parse(gpus.out)["slurm"]["error"], nullptr);
}

// `gleaner queue --json`'s job `id`, or null.
json QueuedJob(const std::string& data, int id) {
  const Outcome q = Gleaner("--data-dir " + data + " queue --all --json");
  if (q.rc != 0) return q.err;
  const json doc = json::parse(q.out);
  for (const json& j : doc["jobs"]) {
    if (j["id"] == id) return j;
  }
  return nullptr;
}

// The id of the Slurm job gleaner submitted for its job `id`, running; "".
std::string RunningSlurmJobOf(const testing::LocalSlurm& slurm, int id) {
  const std::string out =
      slurm.Run("squeue -h -t RUNNING -n gleaner-" + std::to_string(id) + " -o '%i %P %u'");
  return out.substr(0, out.find(' '));
}

TEST_F(SlurmClusterTest, BridgeModeRunsGleanersJobInSlurmAndSlurmRequeuesIt) {
  // slurmstepd writes the job's log as the user: the data directory must
  // let them through (as gleaner makes it: 0711).
  std::filesystem::permissions(data_.path(), std::filesystem::perms::owner_all |
                                                 std::filesystem::perms::group_exec |
                                                 std::filesystem::perms::others_exec);
  const std::string data = (data_.path() / "state").string();
  WriteConfig("idle_alerts = false\nbridge = true\nbridge_partition = \"scavenger\"\n");
  const testing::SharedGleaner shared;
  const std::string pid_file = (data_.path() / "up.pid").string();
  ASSERT_EQ(std::system((std::string(GLEANER_BINARY) + " up --fake " + scenario_ + " --data-dir " +
                         data + " --config " + data_.path().string() + "/gleaner.toml --for 120 >" +
                         data_.path().string() + "/up.log 2>&1 & echo $! >" + pid_file)
                            .c_str()),
            0);
  const testing::KillOnExit stop(pid_file);
  ASSERT_TRUE(WaitUntil(20, [&] { return std::filesystem::exists(data + "/gleaner.sock"); }));
  const auto log = [&] { return testing::Slurp(data_.path() / "up.log"); };

  // The user's job becomes a Slurm job in the scavenger partition, as the user.
  const Outcome submitted = testing::RunBinary(
      shared.path(), "--data-dir " + data + " submit --gpus 1 -- sh -c 'echo attempt; sleep 300'",
      "cd /tmp && runuser -u " + user_.name() + " --");
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  std::string first;
  ASSERT_TRUE(WaitUntil(20, [&] { return !(first = RunningSlurmJobOf(slurm_, 1)).empty(); }))
      << log() << slurm_.Run("squeue");
  EXPECT_THAT(slurm_.Run("squeue -h -j " + first + " -o '%P %u'"),
              HasSubstr("scavenger " + user_.name()));
  ASSERT_TRUE(WaitUntil(10,
                        [&] {
                          const json j = QueuedJob(data, 1);
                          return j.is_object() && j["state"] == "running" &&
                                 j["reason"].get<std::string>().find(
                                     "Slurm job " + first + " RUNNING") != std::string::npos;
                        }))
      << QueuedJob(data, 1).dump() << log();

  // A high-tier job wants every GPU: Slurm requeues gleaner's job, which goes
  // back to gleaner's queue, and stays there while Slurm holds the GPUs.
  const std::string high =
      slurm_.Run("sbatch --parsable -p high --gres=gpu:4 -o /dev/null --wrap 'sleep 300'");
  ASSERT_TRUE(WaitUntil(20, [&] { return QueuedJob(data, 1)["state"] == "queued"; }))
      << QueuedJob(data, 1).dump() << log();
  const Outcome events = Gleaner("--data-dir " + data + " show 1 --events --json");
  ASSERT_EQ(events.rc, 0) << events.err;
  EXPECT_THAT(events.out, HasSubstr("vacated: requeued by Slurm (job " + first));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(QueuedJob(data, 1)["state"], "queued") << log();
  EXPECT_EQ(RunningSlurmJobOf(slurm_, 1), "");

  // The high-tier job ends: gleaner places its job again, as a new Slurm job.
  slurm_.Run("scancel " + high.substr(0, high.find_first_of(";\n")));
  std::string second;
  ASSERT_TRUE(WaitUntil(30,
                        [&] {
                          second = RunningSlurmJobOf(slurm_, 1);
                          return !second.empty() && second != first;
                        }))
      << log() << slurm_.Run("squeue");
  const json again = QueuedJob(data, 1);
  EXPECT_EQ(again["attempts"], 2);

  // Both attempts wrote to its log.
  EXPECT_TRUE(WaitUntil(10,
                        [&] {
                          const std::string out = testing::Slurp(data + "/logs/1.out");
                          return out.find("attempt\nattempt") != std::string::npos;
                        }))
      << testing::Slurp(data + "/logs/1.out") << testing::Slurp(data + "/logs/1.err");

  // Cancelled in gleaner: Slurm stops it.
  ASSERT_EQ(Gleaner("--data-dir " + data + " cancel 1").rc, 0);
  EXPECT_TRUE(WaitUntil(15, [&] { return RunningSlurmJobOf(slurm_, 1).empty(); })) << log();
}

}  // namespace
}  // namespace gleaner
