// gleaner up and the job commands as a user runs them: a real daemon
// process on simulated GPUs, real job processes, the state on disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/clock.h"
#include "net/http_client.h"
#include "observe/minute_rollup.h"
#include "store/open_store.h"
#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_group.h"
#include "testing/throwaway_user.h"

namespace gleaner {
namespace {

using nlohmann::json;
using ::testing::ContainsRegex;
using testing::Gleaner;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Outcome;

// Two of the demo's GPUs that stay quiet.
constexpr const char* kDemoGpu3 = "GPU-d891083c-464e-7078-2ef8-84c14c3b3243";
constexpr const char* kDemoGpu6 = "GPU-113814fa-1021-0a30-f3d6-310e7cc11c53";

TEST(UpBinaryTest, SubmitRunsOnAnIdleGpuAndCancelStopsIt) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config =
      dir.Write("g.toml", "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n");
  // The daemon, in the background, for long enough.
  const std::string daemon_log = (dir.path() / "up.log").string();
  ASSERT_EQ(std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data +
                         " --config " + config + " --for 30 >" + daemon_log + " 2>&1 &")
                            .c_str()),
            0);
  Outcome early;
  for (int i = 0; i < 400; ++i) {  // until the daemon has created its state
    early = Gleaner("--data-dir " + data + " queue --json");
    if (early.rc == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(early.rc, 0) << early.err;
  using std::filesystem::perms;
  EXPECT_EQ(std::filesystem::status(data).permissions() & perms::all,
            perms::owner_all | perms::group_exec | perms::others_exec);
  EXPECT_EQ(std::filesystem::status(data + "/gleaner.db").permissions() & perms::all,
            perms::owner_read | perms::owner_write);  // it records who submitted what

  Outcome submitted = Gleaner("--data-dir " + data + " submit --gpus 1 -- sleep 30");
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  EXPECT_EQ(submitted.out, "submitted job 1\n");
  Outcome too_big = Gleaner("--data-dir " + data + " submit --gpus 9 -- sleep 30");
  EXPECT_EQ(too_big.rc, 4);
  EXPECT_THAT(too_big.err, HasSubstr("gpus: 9 GPUs, but no host here has more than 8"));

  json job;
  std::string refused;  // what a failed `queue` said (once seen in CI under load)
  for (int i = 0; i < 400; ++i) {
    const Outcome queue = Gleaner("--data-dir " + data + " queue --json");
    if (queue.rc != 0) {
      refused = queue.err;
    } else {
      job = json::parse(queue.out)["jobs"][0];
      if (job["state"] == "running") break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(job["state"], "running") << job.dump() << " " << refused;
  EXPECT_EQ(job["gpus"].size(), 1u);
  EXPECT_EQ(job["attempts"], 1);
  // `sleep` opens no CUDA context, yet its GPU reads as lent, to job 1.
  json lent;
  for (int i = 0; i < 100 && lent.is_null(); ++i) {
    const json doc = json::parse(Gleaner("--data-dir " + data + " gpus --json").out);
    for (const json& g : doc["gpus"]) {
      if (g["uuid"] == job["gpus"][0] && g["verdict"]["state"] == "harvested") lent = g["verdict"];
    }
    if (lent.is_null()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(lent.is_null()) << "job 1's GPU never read as lent";
  EXPECT_EQ(lent["evidence"]["reason"], "lent to gleaner job 1");
  EXPECT_EQ(lent["evidence"]["lent_to_job"], 1);
  // Parking is off by default: nothing to keep, nothing to unpark.
  const Outcome keep = Gleaner("--data-dir " + data + " keep 0");
  EXPECT_NE(keep.rc, 0);
  EXPECT_THAT(keep.err, HasSubstr("[parking] is off in gleaner.toml"));
  EXPECT_THAT(Gleaner("--data-dir " + data + " unpark 0").err,
              HasSubstr("no holder is parked on GPU 0"));
  EXPECT_THAT(Gleaner("--data-dir " + data + " unpark 0 --give-up").err,
              HasSubstr("no holder is parked on GPU 0"));
  EXPECT_THAT(Gleaner("--data-dir " + data + " unpark 0 --kill").err,
              HasSubstr("no holder is parked on GPU 0"));
  EXPECT_THAT(Gleaner("--data-dir " + data + " keep 'GPU 0'").err,
              HasSubstr("is not a GPU: give its index (0) or its UUID"));

  // Its output, followed until it ends: a second job that prints and exits.
  Outcome printer =
      Gleaner("--data-dir " + data + " submit -- sh -c 'echo one; sleep 0.3; echo two'");
  ASSERT_EQ(printer.rc, 0) << printer.err;
  Outcome followed = Gleaner("--data-dir " + data + " logs -f 2", "timeout 20");
  EXPECT_EQ(followed.rc, 0) << followed.err;
  EXPECT_EQ(followed.out, "one\ntwo\n");

  Outcome cancelled = Gleaner("--data-dir " + data + " cancel 1");
  ASSERT_EQ(cancelled.rc, 0) << cancelled.err;
  Outcome shown;
  for (int i = 0; i < 400; ++i) {
    shown = Gleaner("--data-dir " + data + " show 1");
    if (testing::Slurp(daemon_log).find("job 1 ended (cancelled)") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(json::parse(shown.out)["state"], "cancelled");
  EXPECT_THAT(testing::Slurp(daemon_log), HasSubstr("job 1 started as "));
  EXPECT_THAT(testing::Slurp(daemon_log),
              ContainsRegex("job 1 cancelled by [a-z0-9_-]+: killing it"));
  EXPECT_THAT(testing::Slurp(daemon_log), HasSubstr("job 1 ended (cancelled)"));
  EXPECT_EQ(Gleaner("--data-dir " + data + " queue --json").rc, 0);
  EXPECT_EQ(json::parse(Gleaner("--data-dir " + data + " queue --json").out)["jobs"].size(), 0u);
  EXPECT_EQ(json::parse(Gleaner("--data-dir " + data + " queue --all --json").out)["jobs"].size(),
            2u);  // the cancelled one and the printer, which succeeded
}

// The README's first run, with the default configuration: the demo's quiet
// GPUs have a recalled past, so a job starts at once, not after 5 minutes.
TEST(UpBinaryTest, TheDemoRunsAJobAtOnceWithDefaults) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  std::system((std::string(GLEANER_BINARY) + " up --fake demo --listen none --data-dir " + data +
               " --for 30 >" + (dir.path() / "up.log").string() + " 2>&1 &")
                  .c_str());
  Outcome submitted;
  for (int i = 0; i < 400; ++i) {  // until the daemon serves
    submitted = Gleaner("--data-dir " + data + " submit --gpus 1 -- sleep 30");
    if (submitted.rc == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  json job;
  for (int i = 0; i < 400; ++i) {
    job = json::parse(Gleaner("--data-dir " + data + " queue --json").out)["jobs"][0];
    if (job["state"] == "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(job["state"], "running") << job.dump();
  EXPECT_THAT(testing::Slurp((dir.path() / "up.log").string()),
              HasSubstr("recalled the last 5m00s of fake:demo"));
  EXPECT_EQ(Gleaner("--data-dir " + data + " cancel 1").rc, 0);
}

// The demo with a recorded week: GPU 3 was busy every hour, GPU 6
// every 6 hours. Both are quiet now; a job expected to run 2 hours goes to
// GPU 6, whose quiet is expected to outlast it, and says so, although GPU 3
// comes first in the node's order. With the flag off, it does not.
// `then` runs while the long job runs.
json RunALongJobAfterARecordedWeek(const std::string& config,
                                   const std::function<void(const std::string& data)>& then = {}) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string up = std::string(GLEANER_BINARY) + " up --fake demo --listen none --data-dir " +
                         data + " --config " + dir.Write("g.toml", config) + " >>" +
                         (dir.path() / "up.log").string() + " 2>&1";
  EXPECT_EQ(std::system((up + " --for 1").c_str()), 0);  // the store knows the GPUs
  {
    auto store = store::OpenStore(data + "/gleaner.db");
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return {};
    // A week of minutes that ended 10 minutes ago: too long ago to resume
    // the verdicts, but the spells are learned.
    const core::TimePoint end = observe::MinuteOf(core::RealClock().Now()) - core::Seconds(600);
    std::vector<observe::MinuteRollup> minutes;
    for (const auto& [uuid, every] : {std::pair(kDemoGpu3, 60), std::pair(kDemoGpu6, 360)}) {
      for (int m = 7 * 24 * 60; m > 0; --m) {
        observe::MinuteRollup r;
        r.uuid = core::GpuUuid(uuid);
        r.minute = end - core::Seconds(int64_t{60} * m);
        r.samples = 6;
        const bool busy = m % every == 0;
        r.utilization_min_pct = r.utilization_mean_pct = r.utilization_max_pct = busy ? 90 : 0;
        r.state = busy ? observe::GpuState::kBusy : observe::GpuState::kIdle;
        r.observed = core::Seconds(60);
        (busy ? r.busy : r.idle) = core::Seconds(60);
        minutes.push_back(std::move(r));
      }
    }
    EXPECT_TRUE((*store)->AddRollups(minutes).ok());
  }
  std::system((up + " --for 30 &").c_str());
  Outcome submitted;
  for (int i = 0; i < 400; ++i) {  // until the daemon serves
    submitted =
        Gleaner("--data-dir " + data + " submit --gpus 1 --expected-runtime 7200 -- sleep 30");
    if (submitted.rc == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(submitted.rc, 0) << submitted.err;
  // A submit made before the daemon served went into the store itself:
  // the queue may answer nothing while the daemon is still starting.
  json job = json::object();
  for (int i = 0; i < 400; ++i) {
    const json doc =
        json::parse(Gleaner("--data-dir " + data + " queue --json").out, nullptr, false);
    const json jobs = doc.is_object() ? doc.value("jobs", json::array()) : json::array();
    if (!jobs.empty() && jobs[0].is_object()) job = jobs[0];
    if (job.value("state", "") == "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // What the placement read is in the verdicts too, once a pass has judged
  // GPU 3 (a const json's operator[] on a missing key is undefined: look
  // the path up).
  static const json::json_pointer kForecast("/verdict/evidence/quiet_forecast");
  for (int i = 0; i < 100 && !job.contains("gpu3_forecast"); ++i) {
    const json gpus =
        json::parse(Gleaner("--data-dir " + data + " gpus --json").out, nullptr, false);
    for (const json& g : gpus.is_object() ? gpus.value("gpus", json::array()) : json::array()) {
      if (g.is_object() && g.value("uuid", "") == kDemoGpu3 && g.contains(kForecast)) {
        job["gpu3_forecast"] = g.at(kForecast);
      }
    }
    if (!job.contains("gpu3_forecast")) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (then) then(data);
  EXPECT_EQ(Gleaner("--data-dir " + data + " cancel 1").rc, 0);
  return job;
}

// Jobs that declare nothing are guessed from their user's past runs of the
// same command: after three short runs, the fourth is expected short and
// takes the short window.
void RunShortJobsUntilOneIsGuessed(const std::string& data) {
  const std::string submit = "--data-dir " + data + " submit --gpus 1 -- sh -c 'sleep 0.1'";
  json jobs;
  for (int id = 2; id <= 5; ++id) {
    ASSERT_EQ(Gleaner(submit).rc, 0);
    for (int i = 0; i < 400; ++i) {
      const json doc =
          json::parse(Gleaner("--data-dir " + data + " queue --all --json").out, nullptr, false);
      jobs = doc.is_object() ? doc.value("jobs", json::array()) : json::array();
      if (jobs.size() == static_cast<size_t>(id) && jobs.back()["state"] == "succeeded") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(jobs.back()["state"], "succeeded") << jobs.dump();
  }
  const Outcome started = Gleaner("--data-dir " + data + " events --job 5 --kind started");
  EXPECT_THAT(started.out, HasSubstr("p80 of 3 runs of sh sleep 0.1 by root")) << started.out;
  // The short window (GPU 6 has the long job).
  EXPECT_THAT(started.out, HasSubstr("expected idle >= ")) << started.out;
  EXPECT_THAT(started.out, HasSubstr(kDemoGpu3)) << started.out;
}

TEST(UpBinaryTest, ALongJobGoesToTheGpuExpectedToStayQuietLonger) {
  const json job = RunALongJobAfterARecordedWeek("", RunShortJobsUntilOneIsGuessed);
  ASSERT_EQ(job.value("state", ""), "running") << job.dump();
  EXPECT_EQ(job["gpus"][0], kDemoGpu6) << job.dump();
  EXPECT_THAT(job["reason"].get<std::string>(),
              HasSubstr("expected idle >= 4h16m at p80; job expected 2h00m (declared)"));
  ASSERT_TRUE(job.contains("gpu3_forecast")) << job.dump();
  EXPECT_EQ(job["gpu3_forecast"].value("own", false), true) << job.dump();
  EXPECT_LT(job["gpu3_forecast"].value("p80_s", 1e9), 60 * 60);

  const json packed =
      RunALongJobAfterARecordedWeek("[scheduler]\nwindow_aware_placement = false\n");
  ASSERT_EQ(packed.value("state", ""), "running") << packed.dump();
  EXPECT_EQ(packed["gpus"][0], kDemoGpu3) << packed.dump();
  EXPECT_THAT(packed["reason"].get<std::string>(), Not(HasSubstr("expected idle")));
}

// A sweep: one job per index, each told its index, never more at once
// than the array allows.
TEST(UpBinaryTest, ArrayTasksRunAtMostNAtOnce) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config =
      dir.Write("g.toml", "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.1\n");
  std::system((std::string(GLEANER_BINARY) + " up --fake demo --listen none --data-dir " + data +
               " --config " + config + " --for 30 >" + (dir.path() / "up.log").string() + " 2>&1 &")
                  .c_str());
  Outcome submitted;
  for (int i = 0; i < 400; ++i) {  // until the daemon serves
    submitted = Gleaner("--data-dir " + data +
                        " submit --array 0-5%2 -- sh -c 'echo task $GLEANER_ARRAY_TASK_ID; "
                        "sleep 0.4'");
    if (submitted.rc == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  EXPECT_EQ(submitted.out, "submitted array 1: 6 tasks, jobs 1-6\n");
  size_t most_running = 0;
  bool saw_limit_reason = false;
  json jobs;
  for (int i = 0; i < 400; ++i) {
    jobs = json::parse(Gleaner("--data-dir " + data + " queue --json").out)["jobs"];
    size_t running = 0;
    for (const json& j : jobs) {
      running += j["state"] == "running" || j["state"] == "vacating";
      saw_limit_reason = saw_limit_reason || j["reason"] == "array 1 runs at most 2 tasks at once";
    }
    most_running = std::max(most_running, running);
    if (jobs.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(jobs.empty()) << jobs.dump() << "\n" << testing::Slurp(dir.path() / "up.log");
  EXPECT_LE(most_running, 2u);
  EXPECT_TRUE(saw_limit_reason);
  const json all = json::parse(Gleaner("--data-dir " + data + " queue --all --json").out)["jobs"];
  ASSERT_EQ(all.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(all[i]["state"], "succeeded") << all[i].dump();
    EXPECT_EQ(all[i]["array_id"], 1);
    EXPECT_EQ(all[i]["array_index"], i);
    EXPECT_EQ(Gleaner("--data-dir " + data + " logs " + std::to_string(i + 1)).out,
              "task " + std::to_string(i) + "\n");
  }
}

TEST(UpBinaryTest, ClientsSayWhatIsMissing) {
  testing::TempDir dir;
  Outcome none = Gleaner("--data-dir " + dir.path().string() + "/nothing submit -- true");
  EXPECT_EQ(none.rc, 1);
  EXPECT_THAT(none.err, HasSubstr("start `gleaner up` first"));
  Outcome no_command = Gleaner("--data-dir " + dir.path().string() + " submit --gpus 1");
  EXPECT_EQ(no_command.rc, 2);
  EXPECT_THAT(no_command.err, HasSubstr("give the command after --"));
  Outcome unknown = Gleaner("show 99 --data-dir " + dir.path().string());
  EXPECT_THAT(unknown.err, HasSubstr("no gleaner state"));
}

}  // namespace
}  // namespace gleaner

namespace gleaner {
namespace {

// kill -9 of the daemon mid-job: the job keeps running, and the restarted
// daemon takes it back instead of running it twice.
// Stops the daemon with `signal` while a job runs, starts it again and
// expects the job taken back, not started anew.
void ExpectAJobToSurviveTheDaemon(int signal) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config =
      dir.Write("g.toml", "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n");
  const auto start_daemon = [&](const std::string& log, double seconds) {
    const std::string pidfile = (dir.path() / "daemon.pid").string();
    std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data + " --config " +
                 config + " --for " + std::to_string(seconds) + " >" + log + " 2>&1 & echo $! >" +
                 pidfile)
                    .c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return std::stoi(testing::Slurp(pidfile));
  };
  const std::string first_log = (dir.path() / "first.log").string();
  const int daemon = start_daemon(first_log, 30);
  Outcome submitted;
  for (int i = 0; i < 400; ++i) {
    submitted = Gleaner("--data-dir " + data + " submit -- sleep 60");
    if (submitted.rc == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  json job;
  for (int i = 0; i < 400 && job["pid"].is_null(); ++i) {
    job = json::parse(Gleaner("--data-dir " + data + " show 1").out);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(job["state"], "running") << job.dump();
  const int job_pid = job["pid"].get<int>();

  ASSERT_EQ(kill(daemon, signal), 0);
  for (int i = 0; i < 200 && kill(daemon, 0) == 0; ++i) {  // until a clean stop is done
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(kill(job_pid, 0), 0) << "the job died with the daemon";

  const std::string second_log = (dir.path() / "second.log").string();
  start_daemon(second_log, 3);
  for (int i = 0; i < 400 && testing::Slurp(second_log).find("taken back") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_THAT(testing::Slurp(second_log),
              HasSubstr("job 1 still running (pid " + std::to_string(job_pid) + "): taken back"));
  json again = json::parse(Gleaner("--data-dir " + data + " show 1").out);
  EXPECT_EQ(again["state"], "running");
  EXPECT_EQ(again["attempts"], 1);  // not started a second time
  EXPECT_EQ(again["pid"], job_pid);

  // Cancel reaches the adopted job too.
  ASSERT_EQ(Gleaner("--data-dir " + data + " cancel 1").rc, 0);
  bool gone = false;
  for (int i = 0; i < 400 && !gone; ++i) {
    gone = kill(job_pid, 0) != 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "the adopted job survived cancel";
  if (!gone) kill(-job_pid, SIGKILL);
}

TEST(UpBinaryTest, AJobSurvivesKill9OfTheDaemonAndIsTakenBack) {
  ExpectAJobToSurviveTheDaemon(SIGKILL);
}

// What `systemctl restart gleaner` does under the unit's KillMode=process:
// SIGTERM to the daemon alone (deploy/systemd/gleaner.service).
TEST(UpBinaryTest, AJobSurvivesARestartOfTheServiceAndIsTakenBack) {
  ExpectAJobToSurviveTheDaemon(SIGTERM);
}

}  // namespace
}  // namespace gleaner

namespace gleaner {
namespace {

// As root, another user submits through the socket: the job runs as them,
// and they cannot cancel root's job.
TEST(UpBinaryTest, OtherUsersSubmitThroughTheSocketAndRunAsThemselves) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create a user and switch to it";
  testing::ThrowawayUser account("gleaneru");
  ASSERT_TRUE(account.ok());
  const std::string& user = account.name();
  testing::TempDir dir;
  // Others may pass through to the socket, but change nothing: the data
  // directory must be root's alone.
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all |
                                               std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_exec);
  const std::string data = (dir.path() / "state").string();
  const std::string config =
      dir.Write("g.toml", "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n");
  const testing::SharedGleaner shared;
  std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data + " --config " +
               config + " --for 20 >" + (dir.path() / "up.log").string() + " 2>&1 &")
                  .c_str());
  for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(Gleaner("--data-dir " + data + " submit -- sleep 30").rc, 0);  // root's job 1
  const std::string as_user = "cd /tmp && runuser -u " + user + " --";
  Outcome theirs = testing::RunBinary(
      shared.path(), "--data-dir " + data + " submit -- sh -c 'id -un; sleep 30'", as_user);
  ASSERT_EQ(theirs.rc, 0) << theirs.err;
  EXPECT_EQ(theirs.out, "submitted job 2\n");
  Outcome steal = testing::RunBinary(shared.path(), "--data-dir " + data + " cancel 1", as_user);
  EXPECT_EQ(steal.rc, 1);
  EXPECT_THAT(steal.err, HasSubstr("job 1 belongs to root; only they (or root) may cancel it"));
  json job;
  for (int i = 0; i < 400; ++i) {
    job = json::parse(Gleaner("--data-dir " + data + " show 2").out);
    if (job["state"] == "running" &&
        testing::Slurp(data + "/logs/2.out").find(user) != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(job["user"], user);
  EXPECT_EQ(testing::Slurp(data + "/logs/2.out"), user + "\n");  // it ran as them
  Gleaner("--data-dir " + data + " cancel 1");
  Gleaner("--data-dir " + data + " cancel 2");
}

}  // namespace
}  // namespace gleaner

namespace gleaner {
namespace {

// Projects enforced (docs/projects.md): a user charges jobs only to the
// projects they are in, by name or through a Unix group; root to any. A
// class's rules say who may submit it.
TEST(UpBinaryTest, ProjectsAndClassRulesAreEnforcedByMembershipAndGroups) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create users and groups";
  testing::ThrowawayGroup team("glcv");
  testing::ThrowawayUser member("glmember");
  testing::ThrowawayUser outsider("gloutside");
  ASSERT_TRUE(team.ok() && member.ok() && outsider.ok());
  ASSERT_TRUE(team.Add(member.name()));
  testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all |
                                               std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_exec);
  const std::string data = (dir.path() / "state").string();
  const std::string config = dir.Write(
      "g.toml",
      "[projects.vision]\ngroups = [\"" + team.name() +
          "\"]\n[projects.nlp]\nusers = [\"root\"]\n[rules.class.critical]\nusers = [\"root\"]\n"
          "[sampling]\ninterval_s = 0.2\n");
  const testing::SharedGleaner shared;
  std::system((std::string(GLEANER_BINARY) + " up --mode monitor --fake demo --data-dir " + data +
               " --config " + config + " --for 20 >" + (dir.path() / "up.log").string() + " 2>&1 &")
                  .c_str());
  for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto submit = [&](const testing::ThrowawayUser& who, const std::string& project) {
    return testing::RunBinary(shared.path(),
                              "--data-dir " + data + " submit " +
                                  (project.empty() ? "" : "--project " + project) + " -- true",
                              "cd /tmp && runuser -u " + who.name() + " --");
  };
  const Outcome in = submit(member, "vision");
  ASSERT_EQ(in.rc, 0) << in.err << testing::Slurp(dir.path() / "up.log");
  const Outcome mine = submit(member, "");  // their only project
  ASSERT_EQ(mine.rc, 0) << mine.err;
  EXPECT_EQ(json::parse(Gleaner("--data-dir " + data + " show 2").out)["spec"]["project"],
            "vision");
  const Outcome dodge = submit(member, "nlp");
  EXPECT_NE(dodge.rc, 0);
  EXPECT_THAT(dodge.err, HasSubstr(member.name() + " is not in project nlp"));
  const Outcome none = submit(outsider, "");
  EXPECT_NE(none.rc, 0);
  EXPECT_THAT(none.err, HasSubstr(outsider.name() + " is in no project"));
  const Outcome critical = testing::RunBinary(
      shared.path(), "--data-dir " + data + " submit --priority-class critical -- true",
      "cd /tmp && runuser -u " + member.name() + " --");
  EXPECT_NE(critical.rc, 0);
  EXPECT_THAT(critical.err, HasSubstr(member.name() + " may not submit critical jobs"));
  EXPECT_EQ(Gleaner("--data-dir " + data + " submit --project vision -- true").rc, 0);  // root
  Gleaner("--data-dir " + data + " cancel 1");
}

// 8 clients submit through the API while the daemon is killed with -9:
// after a restart, every acknowledged job is there, exactly once.
TEST(UpBinaryTest, AcknowledgedSubmitsSurviveKill9OfTheDaemon) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config = dir.Write("g.toml", "[sampling]\ninterval_s = 0.5\n");
  const std::string pidfile = (dir.path() / "daemon.pid").string();
  std::system((std::string(GLEANER_BINARY) + " up --mode monitor --fake demo --data-dir " + data +
               " --config " + config + " --for 60 >/dev/null 2>&1 & echo $! >" + pidfile)
                  .c_str());
  const std::string socket = data + "/gleaner.sock";
  for (int i = 0; i < 200 && !std::filesystem::exists(socket); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(std::filesystem::exists(socket));
  net::Endpoint api;
  api.unix_path = socket;
  const int daemon = std::stoi(testing::Slurp(pidfile));

  std::mutex mu;
  std::set<int64_t> acknowledged;
  std::atomic<int> acks{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < 250; ++i) {
        auto r = net::HttpCall(api, "POST", "/v1/jobs", R"({"command": ["true"]})");
        if (!r.ok() || r->first != 201) return;  // the daemon is gone
        const int64_t id = json::parse(r->second)["id"].get<int64_t>();
        std::lock_guard lock(mu);
        acknowledged.insert(id);
        ++acks;
      }
    });
  }
  while (acks < 400) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(kill(daemon, SIGKILL), 0);
  for (std::thread& t : clients) t.join();
  ASSERT_LT(acknowledged.size(), 2000u) << "the kill came too late to test anything";

  std::system((std::string(GLEANER_BINARY) + " up --mode monitor --fake demo --data-dir " + data +
               " --config " + config + " --for 3 >/dev/null 2>&1 &")
                  .c_str());
  json all;
  for (int i = 0; i < 200; ++i) {
    Outcome listed = Gleaner("--data-dir " + data + " queue --all --json");
    if (listed.rc == 0) {
      all = json::parse(listed.out)["jobs"];
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  std::set<int64_t> stored;
  for (const json& j : all) {
    EXPECT_TRUE(stored.insert(j["id"].get<int64_t>()).second) << "job " << j["id"] << " twice";
  }
  for (int64_t id : acknowledged)
    EXPECT_TRUE(stored.contains(id)) << "lost acknowledged job " << id;
}

}  // namespace
}  // namespace gleaner

namespace gleaner {
namespace {

// `gleaner gpus` beside a running `gleaner up` shows the daemon's view,
// even where it could not open the GPUs itself (here: no driver, the
// daemon on simulated GPUs); an explicit --fake still reads on its own.
TEST(UpBinaryTest, GpusShowsTheRunningDaemonsView) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const testing::KillOnExit up = testing::StartGleanerUp(dir, data, testing::FreePort(), 30);
  testing::Outcome table;
  for (int i = 0; i < 100; ++i) {  // the socket opens just before the first pass ends
    table = testing::Gleaner("--data-dir " + data + " gpus");
    if (table.err.find("no pass over the GPUs yet") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("source fake:demo"));
  EXPECT_THAT(table.out, HasSubstr("held_idle"));
  // The same table as a reading here: processes with their users, the
  // temperature, the power and the clock.
  for (const char* s : {"python eval.py --suite full", "carol", "612 / 700 W", "SM MHz", "TEMP"}) {
    EXPECT_THAT(table.out, HasSubstr(s));
  }
  const testing::Outcome explained = testing::Gleaner("--data-dir " + data + " gpus --explain 0");
  ASSERT_EQ(explained.rc, 0) << explained.err;
  EXPECT_THAT(explained.out, HasSubstr("why        "));
  EXPECT_THAT(explained.out, HasSubstr("thresholds busy at"));
  EXPECT_EQ(testing::Gleaner("--data-dir " + data + " gpus --explain 99").rc, 2)
      << "a GPU it cannot name is a usage error";
  const testing::Outcome doc = testing::Gleaner("--data-dir " + data + " gpus --json");
  ASSERT_EQ(doc.rc, 0) << doc.err;
  EXPECT_EQ(json::parse(doc.out)["schema"], "gleaner.gpus/v1");
  // Without a daemon in the data directory, and no driver: what to do.
  const testing::Outcome alone = testing::Gleaner("--data-dir " + (dir.path() / "none").string() +
                                                  " gpus --nvml-library /nonexistent");
  EXPECT_NE(alone.rc, 0);
  EXPECT_THAT(alone.err, HasSubstr("--fake demo"));
}

}  // namespace
}  // namespace gleaner
