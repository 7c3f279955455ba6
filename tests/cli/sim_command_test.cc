// `gleaner sim replay`: the files it writes have the promised keys, two
// identical runs write identical metrics.json and report.html, and bad
// input is refused with the file and line.
#include "cli/sim_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/exit_codes.h"
#include "testing/run_gleaner.h"

namespace gleaner::cli {
namespace {

// Within a directory of this process's own: ctest runs tests side by side.
std::string TempPath(const std::string& name) {
  static const testing::TempDir dir;
  return (dir.path() / name).string();
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class SimCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = TempPath("sim_trace.csv");
    std::ofstream(trace_) << "job_id,submission_time,duration,num_gpu\n"
                             "a,0,600,1\nb,5,1200,8\nc,5,700,16\nd,90,800,2\nbad,x,1,1\n";
  }
  int Run(const std::string& policy, const std::string& out_dir, bool skip, std::string* err) {
    SimReplayOptions o;
    o.itp = trace_;
    o.gpus = 16;
    o.policy = policy;
    o.out_dir = out_dir;
    o.seed = 3;
    o.skip_bad_rows = skip;
    std::ostringstream out, e;
    const int rc = RunSimReplay(o, out, e);
    *err = e.str();
    return rc;
  }
  std::string trace_;
};

TEST_F(SimCommandTest, WritesMetricsTimingAndReport) {
  for (const char* policy : {"fifo", "sjf", "gleaner"}) {
    const std::string dir = TempPath(std::string("sim_out_") + policy);
    std::string err;
    ASSERT_EQ(Run(policy, dir, true, &err), kExitOk) << err;
    EXPECT_NE(err.find("sim_trace.csv:6:"), std::string::npos) << err;
    const auto metrics = nlohmann::json::parse(Slurp(dir + "/metrics.json"));
    for (const char* key :
         {"trace", "policy", "gpus", "gpus_per_node", "seed", "jobs", "skipped_rows", "makespan_s",
          "mean_jct_s", "median_jct_s", "p99_jct_s", "mean_queue_s", "median_queue_s",
          "p99_queue_s", "utilization", "gpu_seconds", "peak_busy_gpus", "peak_queued_jobs",
          "multi_node_gangs_started"}) {
      EXPECT_TRUE(metrics.contains(key)) << policy << " " << key;
    }
    EXPECT_EQ(metrics["jobs"], 4);
    EXPECT_EQ(metrics["skipped_rows"], 1);
    EXPECT_EQ(metrics["trace"], "sim_trace.csv");  // a name, not a path
    const auto timing = nlohmann::json::parse(Slurp(dir + "/timing.json"));
    for (const char* key : {"wall_s", "jobs_per_s", "peak_rss_bytes"}) {
      EXPECT_TRUE(timing.contains(key)) << key;
    }
    EXPECT_GT(timing["peak_rss_bytes"].get<int64_t>(), 0);
    const std::string html = Slurp(dir + "/report.html");
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no fetches
    EXPECT_EQ(html.find("<script"), std::string::npos);
  }
}

TEST_F(SimCommandTest, IdenticalRunsWriteIdenticalFiles) {
  std::string err;
  ASSERT_EQ(Run("gleaner", TempPath("sim_same_1"), true, &err), kExitOk) << err;
  ASSERT_EQ(Run("gleaner", TempPath("sim_same_2"), true, &err), kExitOk) << err;
  for (const char* file : {"/metrics.json", "/report.html"}) {
    EXPECT_EQ(Slurp(TempPath("sim_same_1") + file), Slurp(TempPath("sim_same_2") + file)) << file;
  }
}

TEST_F(SimCommandTest, ADirtyRowIsAnErrorWithoutSkipBadRows) {
  std::string err;
  EXPECT_EQ(Run("fifo", TempPath("sim_dirty"), false, &err), kExitBadInput);
  EXPECT_NE(err.find("sim_trace.csv:6: column submission_time"), std::string::npos) << err;
  EXPECT_NE(err.find("--skip-bad-rows"), std::string::npos) << err;
}

// openb pods: two GPU pods replayed, a CPU pod and a pending one left out.
constexpr const char* kOpenbPods =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "p0,8000,16384,8,1000,,BE,Running,0,600,0\n"
    "p1,4000,8192,1,250,,LS,Running,10,400,12\n"
    "p2,4000,8192,0,0,,LS,Running,20,300,20\n"
    "p3,4000,8192,2,1000,,Burstable,Pending,30,90,\n";

TEST_F(SimCommandTest, OpenbPodsWriteTheFilesWithWhatWasLeftOut) {
  const std::string pods = TempPath("openb_pods.csv");
  std::ofstream(pods) << kOpenbPods;
  for (const char* policy : {"fifo", "priority", "gleaner"}) {
    SimReplayOptions o;
    o.openb = pods;
    o.gpus = 8;
    o.policy = policy;
    o.out_dir = TempPath(std::string("sim_openb_") + policy);
    std::ostringstream out, err;
    ASSERT_EQ(RunSimReplay(o, out, err), kExitOk) << err.str();
    EXPECT_NE(out.str().find("left out 1 pods without GPUs and 1 never scheduled"),
              std::string::npos)
        << out.str();
    const auto metrics = nlohmann::json::parse(Slurp(o.out_dir + "/metrics.json"));
    EXPECT_EQ(metrics["trace"], "openb_pods.csv");
    EXPECT_EQ(metrics["jobs"], 2);
    EXPECT_EQ(metrics["left_out_without_gpus"], 1);
    EXPECT_EQ(metrics["left_out_never_scheduled"], 1);
    // p0 holds the node 0-600; p1 (one whole GPU for its share) waits for it.
    EXPECT_EQ(metrics["makespan_s"], 600 + 388);
    for (const char* file : {"/timing.json", "/report.html"}) {
      EXPECT_TRUE(std::filesystem::exists(o.out_dir + file)) << file;
    }
    EXPECT_NE(Slurp(o.out_dir + "/report.html").find("gleaner sim replay: openb_pods.csv"),
              std::string::npos);
  }
  // ITP metrics keep their keys: nothing about pods left out.
  std::string err;
  ASSERT_EQ(Run("fifo", TempPath("sim_itp_keys"), true, &err), kExitOk) << err;
  const auto itp = nlohmann::json::parse(Slurp(TempPath("sim_itp_keys") + "/metrics.json"));
  EXPECT_FALSE(itp.contains("left_out_without_gpus"));
  EXPECT_FALSE(itp.contains("left_out_never_scheduled"));
}

TEST_F(SimCommandTest, ADirtyOpenbRowNamesTheLine) {
  const std::string pods = TempPath("openb_dirty.csv");
  std::ofstream(pods) << kOpenbPods << "p4,1,1,1,1000,,Gold,Running,0,10,0\n";
  SimReplayOptions o;
  o.openb = pods;
  o.gpus = 8;
  o.out_dir = TempPath("sim_openb_dirty");
  std::ostringstream out, err;
  EXPECT_EQ(RunSimReplay(o, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("openb_dirty.csv:6: column qos"), std::string::npos) << err.str();
  o.skip_bad_rows = true;
  EXPECT_EQ(RunSimReplay(o, out, err), kExitOk) << err.str();
}

TEST_F(SimCommandTest, OpenbNodesOfSeveralModelsArePricedAndTheCostAwareChoiceCanBeSwitchedOff) {
  const std::string pods = TempPath("openb_pods_models.csv");
  std::ofstream(pods) << kOpenbPods;
  const std::string nodes = TempPath("openb_nodes.csv");
  // V100M16 is the cheaper useful hour (catalog and datasheet); G2 has no price.
  std::ofstream(nodes) << "sn,cpu_milli,memory_mib,gpu,model\n"
                          "n0,64000,262144,8,T4\nn1,64000,262144,8,V100M16\n"
                          "n2,64000,262144,8,G2\nn3,32000,131072,0,\n";
  double cost_on = 0;
  for (bool off : {false, true}) {
    SimReplayOptions o;
    o.openb = pods;
    o.openb_nodes = nodes;
    o.policy = "gleaner";
    o.no_cost_aware = off;
    o.out_dir = TempPath(off ? "sim_models_off" : "sim_models_on");
    std::ostringstream out, err;
    ASSERT_EQ(RunSimReplay(o, out, err), kExitOk) << err.str();
    EXPECT_NE(out.str().find("left out unpriced G2 (1 nodes)"), std::string::npos) << out.str();
    const auto m = nlohmann::json::parse(Slurp(o.out_dir + "/metrics.json"));
    EXPECT_EQ(m["gpus"], 16);
    EXPECT_EQ(m["cost_aware"], !off);
    EXPECT_EQ(m["left_out_without_a_node"], 0);
    EXPECT_EQ(m["cost"]["unpriced_jobs"], 0);
    const auto& by_model = m["cost"]["gpu_hours_by_model"];
    // The 8-GPU pod takes a whole node: the V100 one when the choice is
    // cost-aware, else the first alike by fit (T4); the 1-GPU pod the other.
    const double v100 = by_model["V100M16"], t4 = by_model["T4"];
    if (!off) {
      EXPECT_GT(v100, t4) << by_model.dump();
      cost_on = m["cost"]["gpu_hour_cost"];
    } else {
      EXPECT_GT(t4, v100) << by_model.dump();
      EXPECT_LT(cost_on, m["cost"]["gpu_hour_cost"].get<double>());
    }
  }
  // One cluster only; --no-cost-aware only with several models.
  SimReplayOptions o;
  o.openb = pods;
  o.openb_nodes = nodes;
  o.gpus = 8;
  o.policy = "gleaner";
  o.out_dir = TempPath("sim_models_usage");
  std::ostringstream out, err;
  EXPECT_EQ(RunSimReplay(o, out, err), kExitUsage);
  EXPECT_NE(err.str().find("exactly one cluster"), std::string::npos) << err.str();
  o.openb_nodes.clear();
  o.no_cost_aware = true;
  EXPECT_EQ(RunSimReplay(o, out, err), kExitUsage);
  EXPECT_NE(err.str().find("--no-cost-aware needs --openb-nodes"), std::string::npos) << err.str();
}

TEST_F(SimCommandTest, ExactlyOneTraceIsAUsageError) {
  const std::string pods = TempPath("openb_pods.csv");
  std::ofstream(pods) << kOpenbPods;
  const std::string out = " --gpus 8 --out " + TempPath("sim_usage");
  auto cli = testing::Gleaner("sim replay --itp " + trace_ + " --openb " + pods + out);
  EXPECT_EQ(cli.rc, kExitUsage) << cli.err;
  cli = testing::Gleaner("sim replay" + out);
  EXPECT_EQ(cli.rc, kExitUsage) << cli.err;
  cli = testing::Gleaner("sim replay --openb " + pods + " --policy priority" + out);
  EXPECT_EQ(cli.rc, kExitOk) << cli.err;
  // Called directly, the command says the same.
  SimReplayOptions o;
  o.gpus = 8;
  o.out_dir = TempPath("sim_usage");
  std::ostringstream o_out, o_err;
  EXPECT_EQ(RunSimReplay(o, o_out, o_err), kExitUsage);
  EXPECT_NE(o_err.str().find("exactly one trace"), std::string::npos) << o_err.str();
}

}  // namespace
}  // namespace gleaner::cli
