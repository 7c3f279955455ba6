// --cpus and --mem end to end: gleaner up reports what its jobs may claim
// ([host] in gleaner.toml), the scheduler refuses a job larger than the
// host, holds back one the claimed CPUs leave no room for, and the running
// job's processes sit in cgroups holding them to what they asked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "testing/cgroup_dir.h"
#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using nlohmann::json;
using testing::Gleaner;
using ::testing::HasSubstr;

// The job's JSON once `done` says it is what the test waits for.
json WaitForJob(const std::string& data, int id, const std::function<bool(const json&)>& done) {
  json job;
  for (int i = 0; i < 400; ++i) {
    const testing::Outcome shown = Gleaner("--data-dir " + data + " show " + std::to_string(id));
    if (shown.rc == 0) {
      job = json::parse(shown.out);
      if (done(job)) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return job;
}

TEST(HostShareBinaryTest, JobsClaimTheHostsCpusAndMemoryAndAreHeldToThem) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config = dir.Write(
      "g.toml",
      "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n[host]\ncpus = 2\nmemory = "
      "\"1G\"\n");
  const std::string daemon_log = (dir.path() / "up.log").string();
  const std::string pid_file = (dir.path() / "up.pid").string();
  ASSERT_EQ(std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data +
                         " --config " + config + " --for 60 >" + daemon_log + " 2>&1 & echo $! >" +
                         pid_file)
                            .c_str()),
            0);
  const testing::KillOnExit up(pid_file);
  for (int i = 0; i < 400 && Gleaner("--data-dir " + data + " queue --json").rc != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // The CLI checks the form; the host's size is the scheduler's to judge.
  EXPECT_THAT(Gleaner("--data-dir " + data + " submit --mem 512 -- true").err,
              HasSubstr("--mem 512: give a unit, like 16G or 512M"));
  EXPECT_THAT(Gleaner("--data-dir " + data + " submit --cpus 0.0001 -- true").err,
              HasSubstr("--cpus: a number of CPUs"));

  ASSERT_EQ(Gleaner("--data-dir " + data + " submit --cpus 3 -- sleep 30").out,
            "submitted job 1\n");
  const json refused = WaitForJob(data, 1, [](const json& j) { return j["state"] == "cancelled"; });
  EXPECT_THAT(refused["reason"].get<std::string>(),
              HasSubstr("asks 3 CPUs on one node; the largest node here has 2"));

  ASSERT_EQ(Gleaner("--data-dir " + data + " submit --cpus 1.5 --mem 96M -- sleep 30").rc, 0);
  const json running =
      WaitForJob(data, 2, [](const json& j) { return j["state"] == "running" && j["pid"] > 0; });
  ASSERT_EQ(running["state"], "running") << running.dump();
  EXPECT_EQ(running["spec"]["cpus"], 1.5);
  EXPECT_EQ(running["spec"]["memory_bytes"], 96 << 20);

  // Half a CPU is left: a job asking one waits, and says why.
  ASSERT_EQ(Gleaner("--data-dir " + data + " submit --cpus 1 -- sleep 30").rc, 0);
  const json waiting = WaitForJob(data, 3, [](const json& j) {
    return j["reason"].is_string() &&
           j["reason"].get<std::string>().find("CPUs unclaimed") != std::string::npos;
  });
  EXPECT_EQ(waiting["state"], "queued") << waiting.dump();
  EXPECT_THAT(waiting["reason"].get<std::string>(), HasSubstr("only 0.5 CPUs unclaimed"));

  // Where this host sets limits, the job's processes are held to them.
  const std::string log = testing::Slurp(daemon_log);
  if (log.find("are held by cpu") == std::string::npos ||
      log.find("memory (cgroup") == std::string::npos) {
    GTEST_SKIP() << "this host enforces no limits: " << log;
  }
  const int pid = running["pid"];
  EXPECT_THAT(testing::LimitOf(pid, "cpu.max", "cpu", "cpu.cfs_quota_us"),
              ::testing::AnyOf("150000 100000", "150000"));
  const std::string memory = testing::LimitOf(pid, "memory.max", "memory", "memory.limit_in_bytes");
  EXPECT_EQ(memory, std::to_string(96 << 20));
  for (int id : {2, 3}) {
    EXPECT_EQ(Gleaner("--data-dir " + data + " cancel " + std::to_string(id)).rc, 0);
  }
  WaitForJob(data, 2, [](const json& j) { return j["state"] == "cancelled"; });
}

TEST(SubmitBinaryTest, RepeatableOptionsBeforeTheCommandAndAContainer) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string daemon_log = (dir.path() / "up.log").string();
  const std::string pid_file = (dir.path() / "up.pid").string();
  ASSERT_EQ(std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data +
                         " --for 60 >" + daemon_log + " 2>&1 & echo $! >" + pid_file)
                            .c_str()),
            0);
  const testing::KillOnExit up(pid_file);
  for (int i = 0; i < 400 && Gleaner("--data-dir " + data + " queue --json").rc != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(Gleaner("--data-dir " + data + " submit --max-runtime 20 -- sleep 30").rc, 0);
  // A repeatable option right before `--` once took the command's own
  // options (-c) for gleaner's. This job waits for the first to succeed:
  // it does not start while the test looks at it.
  const testing::Outcome submitted = Gleaner(
      "--data-dir " + data +
      " submit --after 1 --image localhost/train:1 --mount /data:/data:ro --env X=1 -- sh -c true");
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  const json job = json::parse(Gleaner("--data-dir " + data + " show 2").out);
  EXPECT_EQ(job["spec"]["command"], json({"sh", "-c", "true"}));
  EXPECT_EQ(job["spec"]["env"], json({{"X", "1"}}));
  EXPECT_EQ(job["spec"]["container"],
            json({{"image", "localhost/train:1"}, {"mounts", {"/data:/data:ro"}}}));
  EXPECT_EQ(job["spec"]["working_dir"], "") << "a container starts where its image says";
  EXPECT_THAT(Gleaner("--data-dir " + data + " submit --mount data:/data -- true").err,
              HasSubstr("container mount source: must be an absolute path"));
}

}  // namespace
}  // namespace gleaner
