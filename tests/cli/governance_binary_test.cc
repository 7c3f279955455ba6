// Approvals and the history as people use them: real users and a real
// group, a real daemon on simulated GPUs, the CLI and the API.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "net/http_client.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_group.h"
#include "testing/throwaway_user.h"

namespace gleaner {
namespace {

using nlohmann::json;
using testing::Gleaner;
using ::testing::HasSubstr;
using testing::Outcome;

std::vector<std::string> Kinds(const json& events) {
  std::vector<std::string> kinds;
  for (const json& e : events) kinds.push_back(e["kind"]);
  return kinds;
}

// A critical job waits for its project's approver; a non-approver cannot
// decide it; approved, it runs; its history, read through the CLI and the
// API, says who did what, in order.
TEST(GovernanceBinaryTest, ACriticalJobWaitsForTheProjectsApproverAndItsHistorySaysWho) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create users and groups";
  testing::ThrowawayGroup team("glteam");
  testing::ThrowawayUser submitter("glsubmit");
  testing::ThrowawayUser approver("glapprove");
  testing::ThrowawayUser outsider("glother");
  ASSERT_TRUE(team.ok() && submitter.ok() && approver.ok() && outsider.ok());
  ASSERT_TRUE(team.Add(submitter.name()));
  testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all |
                                               std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_exec);
  const std::string data = (dir.path() / "state").string();
  const std::string config =
      dir.Write("g.toml", "[projects.vision]\ngroups = [\"" + team.name() + "\"]\napprovers = [\"" +
                              approver.name() +
                              "\"]\n[rules.class.critical]\napproval = \"always\"\n"
                              "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n");
  const testing::SharedGleaner shared;
  const std::string up_log = (dir.path() / "up.log").string();
  std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data + " --config " +
               config + " --listen none --for 40 >" + up_log + " 2>&1 &")
                  .c_str());
  for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto as = [&](const testing::ThrowawayUser& who, const std::string& args) {
    return testing::RunBinary(shared.path(), "--data-dir " + data + " " + args,
                              "cd /tmp && runuser -u " + who.name() + " --");
  };

  const Outcome submitted = as(submitter, "submit --priority-class critical -- sleep 30");
  ASSERT_EQ(submitted.rc, 0) << submitted.err << testing::Slurp(up_log);
  EXPECT_EQ(submitted.out, "submitted job 1\n");
  const json waiting = json::parse(as(submitter, "show 1").out);
  EXPECT_EQ(waiting["state"], "pending_approval");
  EXPECT_THAT(waiting["reason"].get<std::string>(),
              HasSubstr("waiting for approval by " + approver.name() + " (or root)"));

  for (const testing::ThrowawayUser* who : {&outsider, &submitter}) {
    const Outcome refused = as(*who, "approve 1");
    EXPECT_NE(refused.rc, 0);
    EXPECT_THAT(refused.err, HasSubstr(who->name() + " may not approve job 1: only " +
                                       approver.name() + " (or root) may (project vision)"));
  }
  const json pending = json::parse(as(approver, "approvals --json").out);
  ASSERT_EQ(pending["jobs"].size(), 1u) << pending.dump();
  EXPECT_EQ(pending["jobs"][0]["id"], 1);
  EXPECT_TRUE(json::parse(as(outsider, "approvals --json").out)["jobs"].empty());

  const Outcome approved = as(approver, "approve 1 --reason 'the demo is tomorrow'");
  ASSERT_EQ(approved.rc, 0) << approved.err;
  EXPECT_EQ(approved.out, "job 1 approved: it is queued\n");
  const Outcome twice = as(approver, "approve 1");
  EXPECT_NE(twice.rc, 0);
  EXPECT_THAT(twice.err, HasSubstr("job 1 is not waiting for approval: it is "));

  ASSERT_EQ(as(submitter, "submit --priority-class critical -- sleep 30").rc, 0);
  const Outcome denied = as(approver, "deny 2 --reason 'use the normal class'");
  ASSERT_EQ(denied.rc, 0) << denied.err;
  EXPECT_EQ(denied.out, "job 2 denied: it is cancelled\n");

  json job;
  for (int i = 0; i < 400; ++i) {
    job = json::parse(as(submitter, "show 1").out);
    if (job["state"] == "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(job["state"], "running") << job.dump() << testing::Slurp(up_log);
  ASSERT_EQ(as(submitter, "cancel 1").rc, 0);

  // The history through the CLI, as the job's owner...
  const Outcome shown = as(submitter, "show 1 --events --json");
  ASSERT_EQ(shown.rc, 0) << shown.err;
  const json events = json::parse(shown.out)["events"];
  EXPECT_THAT(Kinds(events),
              ::testing::ElementsAre("submitted", "approved", "started", "cancelled"));
  EXPECT_EQ(events[0]["actor"], submitter.name());
  EXPECT_EQ(events[1]["actor"], approver.name());
  EXPECT_EQ(events[1]["detail"], "approved by " + approver.name() + ": the demo is tomorrow");
  EXPECT_EQ(events[2]["gpus"].size(), 1u);
  EXPECT_EQ(events[3]["actor"], submitter.name());
  // ... and through the API, the same.
  net::Endpoint api;
  api.unix_path = data + "/gleaner.sock";
  auto answer = net::HttpCall(api, "GET", "/v1/jobs/1/events", "");
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(json::parse(answer->second)["events"], events);
  EXPECT_THAT(as(outsider, "show 1 --events").err, HasSubstr("only they (or root)"));

  // Root reads everyone's; a user only their own.
  const json denials =
      json::parse(Gleaner("--data-dir " + data + " events --kind denied --json").out);
  ASSERT_EQ(denials["events"].size(), 1u);
  EXPECT_EQ(denials["events"][0]["job"], 2);
  EXPECT_EQ(denials["events"][0]["actor"], approver.name());
  const Outcome nosy = as(submitter, "events --user " + approver.name());
  EXPECT_NE(nosy.rc, 0);
  EXPECT_THAT(nosy.err, HasSubstr("only root reads other users' events"));
  EXPECT_THAT(testing::Slurp(up_log), HasSubstr("job 1 of " + submitter.name() + " is waiting"));
}

// The pilot between monitor and harvest: jobs are placed as harvest mode
// would place them, none starts, and the log, the job's reason and
// /metrics say what would have run where.
TEST(GovernanceBinaryTest, ShadowModeStartsNothingAndSaysWhatWouldHaveRun) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config = dir.Write("g.toml", "[sampling]\ninterval_s = 0.2\n");
  const std::string up_log = (dir.path() / "up.log").string();
  std::system((std::string(GLEANER_BINARY) + " up --mode shadow --fake demo --data-dir " + data +
               " --config " + config + " --listen none --for 30 >" + up_log + " 2>&1 &")
                  .c_str());
  for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string marker = (dir.path() / "ran").string();
  const Outcome submitted = Gleaner("--data-dir " + data + " submit -- touch " + marker);
  ASSERT_EQ(submitted.rc, 0) << submitted.err << testing::Slurp(up_log);
  json job;
  for (int i = 0; i < 200; ++i) {
    job = json::parse(Gleaner("--data-dir " + data + " show 1").out);
    if (job["reason"].get<std::string>().find("shadow mode") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(job["state"], "queued");
  EXPECT_EQ(job["attempts"], 0);
  EXPECT_THAT(job["reason"].get<std::string>(), HasSubstr("shadow mode: would run on GPU-"));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "shadow mode ran the job";
  EXPECT_THAT(testing::Slurp(up_log), HasSubstr("shadowing (jobs are placed, none starts)"));
  EXPECT_THAT(testing::Slurp(up_log), HasSubstr("shadow: job 1 of "));
  net::Endpoint api;
  api.unix_path = data + "/gleaner.sock";
  auto metrics = net::HttpCall(api, "GET", "/metrics", "");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->second, HasSubstr("gleaner_shadow_would_start_total 1\n"));
  EXPECT_THAT(metrics->second, HasSubstr("gleaner_shadow_would_run_gpus 1\n"));
  EXPECT_THAT(metrics->second, HasSubstr("gleaner_shadow_would_harvest_gpu_seconds_total "));
  Gleaner("--data-dir " + data + " cancel 1");
}

// The policy's versions: a bad policy changes nothing, a good one takes
// effect without a restart (here: critical jobs start waiting for
// approval), a rollback brings the previous one back, and SIGHUP reads a
// changed gleaner.toml; each is a version, in the history and /metrics.
TEST(GovernanceBinaryTest, PolicyVersionsApplyRollBackAndReloadWithoutARestart) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create a user";
  testing::ThrowawayUser user("glpolicy");
  ASSERT_TRUE(user.ok());
  testing::TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all |
                                               std::filesystem::perms::group_exec |
                                               std::filesystem::perms::others_exec);
  const std::string data = (dir.path() / "state").string();
  const std::string first = "[sampling]\ninterval_s = 0.2\n";
  const std::string config = dir.Write("g.toml", first);
  const testing::SharedGleaner shared;
  const std::string up_log = (dir.path() / "up.log").string();
  const std::string pid_file = (dir.path() / "up.pid").string();
  std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data + " --config " +
               config + " --listen none --for 60 >" + up_log + " 2>&1 & echo $! >" + pid_file)
                  .c_str());
  for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const auto root = [&](const std::string& args) {
    return Gleaner("--data-dir " + data + " " + args);
  };
  const auto waits = [&] {  // whether the user's next critical job waits for approval
    const Outcome o = testing::RunBinary(
        shared.path(), "--data-dir " + data + " submit --priority-class critical -- true",
        "cd /tmp && runuser -u " + user.name() + " --");
    EXPECT_EQ(o.rc, 0) << o.err;
    const json jobs = json::parse(root("queue --all --json").out)["jobs"];
    return !jobs.empty() && jobs.back()["state"] == "pending_approval";
  };
  const auto in_effect = [&](int version) {
    const std::string line = "policy version " + std::to_string(version) + " by ";
    for (int i = 0; i < 200; ++i) {
      if (testing::Slurp(up_log).find(line) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };

  const Outcome shown = root("policy show");
  ASSERT_EQ(shown.rc, 0) << shown.err << testing::Slurp(up_log);
  EXPECT_THAT(shown.out, HasSubstr("# policy version 1, applied "));
  EXPECT_THAT(shown.out, HasSubstr("by gleaner.toml: " + config + " at the first start"));
  EXPECT_THAT(shown.out, HasSubstr("interval_s = 0.2"));
  EXPECT_FALSE(waits());

  const std::string bad =
      dir.Write("bad.toml", first + "[rules.class.critical]\napproval = \"sometimes\"\n");
  const Outcome refused = root("policy apply " + bad);
  EXPECT_NE(refused.rc, 0);
  EXPECT_THAT(refused.err, HasSubstr(bad + ":4:"));
  EXPECT_THAT(refused.err, HasSubstr("expected \"never\", \"over_limit\""));
  EXPECT_THAT(root("policy show").out, HasSubstr("# policy version 1,"));
  EXPECT_EQ(testing::Slurp(config), first);
  // A policy that would leave only root able to submit takes --force.
  const std::string locked =
      dir.Write("locked.toml", first + "[projects.vision]\nusers = [\"no-such-user-here\"]\n");
  const Outcome locks = root("policy apply " + locked);
  EXPECT_NE(locks.rc, 0);
  EXPECT_THAT(locks.err, HasSubstr(locked + " would lock users out: projects are enforced"));
  EXPECT_THAT(locks.err, HasSubstr("apply it anyway with --force"));
  EXPECT_THAT(root("policy show").out, HasSubstr("# policy version 1,"));

  const std::string strict = first + "[rules.class.critical]\napproval = \"always\"\n";
  const std::string good = dir.Write("good.toml", strict + "[ui]\nanonymous_read = false\n");
  const Outcome applied = root("policy apply " + good + " --note 'critical work needs a yes'");
  ASSERT_EQ(applied.rc, 0) << applied.err;
  EXPECT_EQ(applied.out,
            "applied: policy version 2 is running; [ui] changed and take effect at the next "
            "restart\n");
  ASSERT_TRUE(in_effect(2)) << testing::Slurp(up_log);
  EXPECT_TRUE(waits());                                     // without a restart
  EXPECT_EQ(testing::Slurp(config), testing::Slurp(good));  // a restart runs it too
  const Outcome diff = root("policy diff 1");
  EXPECT_THAT(diff.out, HasSubstr("--- version 2 (running)\n+++ version 1\n"));
  EXPECT_THAT(diff.out, HasSubstr("- approval = \"always\"\n"));

  const Outcome back = root("policy rollback");
  ASSERT_EQ(back.rc, 0) << back.err;
  EXPECT_EQ(back.out,
            "rolled back: policy version 3 is running; [ui] changed and take effect at the "
            "next restart\n");
  ASSERT_TRUE(in_effect(3));
  EXPECT_FALSE(waits());
  EXPECT_EQ(testing::Slurp(config), first);
  EXPECT_THAT(root("policy rollback 9").err, HasSubstr("no policy version 9"));

  dir.Write("g.toml", strict);
  ASSERT_EQ(kill(std::stoi(testing::Slurp(pid_file)), SIGHUP), 0);
  ASSERT_TRUE(in_effect(4)) << testing::Slurp(up_log);
  EXPECT_TRUE(waits());

  const Outcome listed = root("policy list");
  EXPECT_THAT(listed.out, HasSubstr("4 *"));
  EXPECT_THAT(listed.out, HasSubstr("rollback to version 1"));
  EXPECT_THAT(listed.out, HasSubstr("critical work needs a yes"));
  const json rolled = json::parse(root("events --kind policy_rolled_back --json").out);
  ASSERT_EQ(rolled["events"].size(), 1u);
  EXPECT_EQ(rolled["events"][0]["actor"], "root");
  net::Endpoint api;
  api.unix_path = data + "/gleaner.sock";
  auto metrics = net::HttpCall(api, "GET", "/metrics", "");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->second, HasSubstr("gleaner_policy_version 4\n"));
  const Outcome nosy = testing::RunBinary(shared.path(), "--data-dir " + data + " policy show",
                                          "cd /tmp && runuser -u " + user.name() + " --");
  EXPECT_NE(nosy.rc, 0);
  EXPECT_THAT(nosy.err, HasSubstr("only root reads and changes the policy"));
  const Outcome forced = root("policy apply " + locked + " --force");
  EXPECT_EQ(forced.rc, 0) << forced.err;
  EXPECT_THAT(forced.out, HasSubstr("policy version 5 is running"));
  kill(std::stoi(testing::Slurp(pid_file)), SIGTERM);
}

// The periodic evaluation: the store of a demo run replayed under the
// running policy and a candidate that judges a GPU idle after 30 s rather
// than 5 minutes. A history too short to say anything is refused with
// what to do. The run lasts past a minute's end; stopping stores the
// minute under way too.
TEST(GovernanceBinaryTest, ADryRunComparesTwoPoliciesOnTheSitesOwnHistory) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config = dir.Write("g.toml", "[sampling]\ninterval_s = 0.5\n");
  const std::string candidate =
      dir.Write("sooner.toml", "[sampling]\ninterval_s = 0.5\n[idle]\nidle_after_s = 30\n");
  const std::string args =
      "--data-dir " + data + " policy dry-run " + candidate + " --config " + config + " --since 1h";
  EXPECT_THAT(Gleaner(args).err, HasSubstr("no history at " + data + "/gleaner.db"));
  const std::string pid_file = (dir.path() / "up.pid").string();
  std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data + " --config " +
               config + " --listen none --for 62 >/dev/null 2>&1 & echo $! >" + pid_file)
                  .c_str());
  for (int i = 0; i < 400 && !std::filesystem::exists(data + "/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(Gleaner("--data-dir " + data + " submit --expected-runtime 120 -- sleep 1").rc, 0);
  const Outcome early = Gleaner(args);
  EXPECT_NE(early.rc, 0);
  EXPECT_THAT(early.err, HasSubstr("a dry-run needs at least 2: let gleaner up watch longer"));
  const int daemon = std::stoi(testing::Slurp(pid_file));
  for (int i = 0; i < 900 && kill(daemon, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const Outcome run = Gleaner(args + " --json");
  ASSERT_EQ(run.rc, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["gpus"], 8);
  EXPECT_GE(doc["gpu_minutes"].get<int>(), 16);
  EXPECT_EQ(doc["jobs"], 1);
  EXPECT_EQ(doc["candidate"]["policy"], candidate);
  EXPECT_THAT(doc["current"]["policy"].get<std::string>(), HasSubstr(config));
  // In a minute or two of history nothing is quiet for 5 minutes: the
  // running policy lends nothing. The candidate lends the demo's quiet
  // GPUs, and the job (a second, as it ran) finishes.
  EXPECT_EQ(doc["current"]["jobs_finished"], 0);
  EXPECT_EQ(doc["current"]["harvested_gpu_hours"].get<double>(), 0);
  EXPECT_EQ(doc["candidate"]["jobs_finished"], 1);
  EXPECT_GT(doc["candidate"]["harvested_gpu_hours"].get<double>(), 0);
  const Outcome text = Gleaner(args);
  EXPECT_THAT(text.out, HasSubstr("dry-run on this site's history: "));
  EXPECT_THAT(text.out, HasSubstr("harvested GPU-hours"));
}

}  // namespace
}  // namespace gleaner
