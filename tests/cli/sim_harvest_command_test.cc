// `gleaner sim harvest` on small owner files: the files it writes carry the
// promised keys, two runs write the same bytes, the seed changes the
// synthetic queue, and bad input is refused with a message that says what
// to fix.
#include "cli/sim_harvest_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/exit_codes.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner::cli {
namespace {

// One VC of 16 GPUs for six hours; the owner's busy count swings.
std::string HeliosVc() {
  std::string vc =
      "time,total_gpu_num,running_gpu_num,pending_gpu_num,idle_gpu_num,running_job_num,"
      "pending_job_num,pending_gpu_num_noless_8,pending_gpu_num_less_8\n";
  for (int minute = 0; minute < 360; ++minute) {
    char time[32];
    std::snprintf(time, sizeof time, "2020-05-01 %02d:%02d:00", minute / 60, minute % 60);
    const int busy = 2 + (minute / 30) % 13;
    vc += std::string(time) + ",16," + std::to_string(busy) + ",0," + std::to_string(16 - busy) +
          ",2,0,0,0\n";
  }
  return vc;
}

struct HarvestRun {
  int rc;
  std::string out;
  std::string err;
};

HarvestRun RunHarvest(SimHarvestOptions o) {
  std::ostringstream out, err;
  const int rc = RunSimHarvest(o, out, err);
  return {rc, out.str(), err.str()};
}

TEST(SimHarvestCommandTest, WritesEveryBaselineAndTheSameBytesTwice) {
  testing::TempDir dir;
  dir.Write("vc.csv", HeliosVc());
  SimHarvestOptions o;
  o.owner.helios = (dir.path() / "vc.csv").string();
  o.out_dir = (dir.path() / "a").string();
  const HarvestRun a = RunHarvest(o);
  ASSERT_EQ(a.rc, kExitOk) << a.err;
  EXPECT_NE(a.out.find("gleaner  checkpoints"), std::string::npos) << a.out;
  o.out_dir = (dir.path() / "b").string();
  ASSERT_EQ(RunHarvest(o).rc, kExitOk);
  for (const char* f : {"/metrics.json", "/report.html"}) {
    EXPECT_EQ(testing::Slurp(dir.path().string() + "/a" + f),
              testing::Slurp(dir.path().string() + "/b" + f))
        << f;
  }
  const auto m = nlohmann::json::parse(testing::Slurp(dir.path().string() + "/a/metrics.json"));
  EXPECT_EQ(m["owner"]["gpus"], 16);
  EXPECT_EQ(m["owner"]["kind"], "helios");
  // The physical limit: the free GPUs of every minute.
  double idle_gpu_minutes = 0;
  for (int minute = 0; minute < 360; ++minute) idle_gpu_minutes += 16 - (2 + (minute / 30) % 13);
  EXPECT_DOUBLE_EQ(m["physical_limit"]["idle_gpu_hours"].get<double>(), idle_gpu_minutes / 60);
  ASSERT_EQ(m["runs"].size(), 5u);
  const std::vector<std::pair<std::string, bool>> runs = {
      {"none", false}, {"naive", true}, {"naive", false}, {"gleaner", true}, {"gleaner", false}};
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = m["runs"][i];
    EXPECT_EQ(r["policy"], runs[i].first);
    EXPECT_EQ(r["checkpoints"], runs[i].second);
    for (const char* key : {"harvested_gpu_hours",
                            "harvested_idle_gpu_hours",
                            "harvested_share_of_idle",
                            "useful_gpu_hours",
                            "lost_gpu_hours",
                            "preemptions",
                            "owner_returns",
                            "owner_delay_gpu_hours",
                            "owner_delay_per_return_s",
                            "jobs_finished",
                            "jobs_unfinished",
                            "jobs_rejected",
                            "mean_jct_s",
                            "median_jct_s",
                            "p99_jct_s",
                            "mean_queue_s",
                            "median_queue_s",
                            "p99_queue_s",
                            "jain_fairness",
                            "classifier_samples"}) {
      EXPECT_TRUE(r.contains(key)) << runs[i].first << " " << key;
    }
    EXPECT_LE(r["harvested_share_of_idle"].get<double>(), 1.0);
  }
  EXPECT_EQ(m["runs"][0]["harvested_gpu_hours"], 0.0);
  EXPECT_GT(m["runs"][3]["harvested_gpu_hours"].get<double>(), 0.0);
  // Money, priced as the default A100-80GB.
  EXPECT_EQ(m["money"]["currency"], "USD");
  EXPECT_EQ(m["money"]["gpu_model"], "A100-80GB");
  EXPECT_GT(m["money"]["idle_cost"].get<double>(), 0.0);
  for (const char* key :
       {"owned_per_gpu_hour", "marginal_per_gpu_hour", "cloud_on_demand_per_gpu_hour",
        "cloud_offer", "cloud_source", "cloud_date"}) {
    EXPECT_TRUE(m["money"].contains(key)) << key;
  }
  for (const auto& r : m["runs"]) {
    EXPECT_DOUBLE_EQ(r["net_savings"].get<double>(),
                     r["cloud_value"].get<double>() - r["energy_cost"].get<double>());
  }
  EXPECT_NE(testing::Slurp(dir.path().string() + "/a/report.html").find("<h2>Money</h2>"),
            std::string::npos);
  const auto timing = nlohmann::json::parse(testing::Slurp(dir.path().string() + "/a/timing.json"));
  EXPECT_GT(timing["peak_rss_bytes"].get<int64_t>(), 0);
  ASSERT_EQ(timing["runs"].size(), m["runs"].size());
  for (size_t i = 0; i < timing["runs"].size(); ++i) {
    EXPECT_EQ(timing["runs"][i]["policy"], m["runs"][i]["policy"]);
    EXPECT_GT(timing["runs"][i]["wall_s"].get<double>(), 0.0);
    EXPECT_GT(timing["runs"][i]["jobs_per_s"].get<double>(), 0.0);
  }
}

// Eight pods for six hours, each holding 20 GB, computing for ten minutes
// every hour and a half (each pod at its own time), quiet otherwise.
std::pair<std::string, std::string> GenAiPods() {
  std::string duty = "value,timestamp_anon,container_ip\n";
  std::string memory = "timestamp_anon,value,container_ip\n";
  for (int minute = 0; minute < 360; ++minute) {
    const std::string at = std::to_string(1662858720 + 60 * minute) + ".0";
    for (int pod = 0; pod < 8; ++pod) {
      const std::string ip = "pod" + std::to_string(pod);
      const bool busy = (minute + 11 * pod) % 90 < 10;
      duty += std::string(busy ? "0.8" : "0.0") + "," + at + "," + ip + "\n";
      memory += at + ",20000000000.0," + ip + "\n";
    }
  }
  return {duty, memory};
}

// Held-idle GPUs: the co-location and parking runs are in the report's
// charts too, and no run claims more of the idle GPU-hours than there were.
TEST(SimHarvestCommandTest, TheReportDrawsEveryLendingRunWithinThePhysicalLimit) {
  testing::TempDir dir;
  const auto [duty, memory] = GenAiPods();
  SimHarvestOptions o;
  o.owner.genai = dir.Write("duty.csv", duty);
  o.owner.genai_memory = dir.Write("memory.csv", memory);
  o.colocate_min_history_s = 600;
  o.out_dir = (dir.path() / "a").string();
  const HarvestRun a = RunHarvest(o);
  ASSERT_EQ(a.rc, kExitOk) << a.err;
  EXPECT_NE(a.out.find(" while idle: "), std::string::npos) << a.out;
  const auto m = nlohmann::json::parse(testing::Slurp(dir.path().string() + "/a/metrics.json"));
  const double idle = m["physical_limit"]["idle_gpu_hours"].get<double>();
  std::set<std::string> policies;
  for (const auto& r : m["runs"]) {
    policies.insert(r["policy"].get<std::string>());
    EXPECT_LE(r["harvested_idle_gpu_hours"].get<double>(), idle + 1e-9) << r.dump();
    EXPECT_LE(r["harvested_idle_gpu_hours"].get<double>(),
              r["harvested_gpu_hours"].get<double>() + 1e-9);
  }
  EXPECT_TRUE(policies.contains("colocate") && policies.contains("park")) << m["runs"].dump();
  const std::string report = testing::Slurp(dir.path().string() + "/a/report.html");
  for (const char* drawn : {"harvested: naive", "harvested: gleaner", "harvested: colocate",
                            "harvested: park", ">colocate<", ">park<", "while owners idle"}) {
    EXPECT_NE(report.find(drawn), std::string::npos) << drawn;
  }
}

TEST(SimHarvestCommandTest, TheSeedDrawsAnotherQueue) {
  testing::TempDir dir;
  dir.Write("vc.csv", HeliosVc());
  SimHarvestOptions o;
  o.owner.helios = (dir.path() / "vc.csv").string();
  o.out_dir = (dir.path() / "a").string();
  ASSERT_EQ(RunHarvest(o).rc, kExitOk);
  o.queue.seed = 1;
  o.out_dir = (dir.path() / "b").string();
  ASSERT_EQ(RunHarvest(o).rc, kExitOk);
  const auto a = nlohmann::json::parse(testing::Slurp(dir.path().string() + "/a/metrics.json"));
  const auto b = nlohmann::json::parse(testing::Slurp(dir.path().string() + "/b/metrics.json"));
  EXPECT_EQ(b["queue"]["seed"], 1);
  EXPECT_NE(a["queue"]["offered_gpu_hours"], b["queue"]["offered_gpu_hours"]);
}

TEST(SimHarvestCommandTest, BadInputSaysWhatToFix) {
  testing::TempDir dir;
  std::string vc = HeliosVc();
  vc.insert(vc.find('\n') + 1, "2020-05-01 00:00:00,16,20,0,0,2,0,0,0\n");  // more busy than total
  dir.Write("bad.csv", vc);
  SimHarvestOptions o;
  o.owner.helios = (dir.path() / "bad.csv").string();
  o.out_dir = (dir.path() / "out").string();
  HarvestRun r = RunHarvest(o);
  EXPECT_EQ(r.rc, kExitBadInput);
  EXPECT_NE(r.err.find("bad.csv:2"), std::string::npos) << r.err;
  o.skip_bad_rows = true;
  r = RunHarvest(o);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_NE(r.err.find("skipped"), std::string::npos) << r.err;

  // A GPU model nothing prices: said before anything runs.
  o.skip_bad_rows = false;
  o.owner.helios = (dir.path() / "good.csv").string();
  dir.Write("good.csv", HeliosVc());
  o.price_gpu = "V100";
  r = RunHarvest(o);
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("no on-prem cost defaults for V100"), std::string::npos) << r.err;

  // No owner workload, or two: a usage error from the command line.
  auto cli = testing::Gleaner("sim harvest --out " + (dir.path() / "x").string());
  EXPECT_EQ(cli.rc, kExitUsage);
  cli =
      testing::Gleaner("sim harvest --helios " + (dir.path() / "bad.csv").string() + " --genai " +
                       (dir.path() / "bad.csv").string() + " --out " + (dir.path() / "x").string());
  EXPECT_EQ(cli.rc, kExitUsage);
}

}  // namespace
}  // namespace gleaner::cli
