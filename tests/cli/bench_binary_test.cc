// `gleaner bench frag` and `gleaner bench sched` through the binary: the
// JSON documents have the promised shape, and a dirty trace row is an error
// naming the file and line.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/temp_dir.h"

namespace {

struct CommandRun {
  int status = -1;
  std::string out;
};

CommandRun Gleaner(const std::string& args) {
  CommandRun r;
  const std::string cmd = std::string(GLEANER_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) r.out.append(buf.data(), n);
  r.status = pclose(pipe);
  return r;
}

class BenchBinaryTest : public ::testing::Test {
 protected:
  // Each test its own directory: ctest runs tests side by side.
  std::string Write(const std::string& name, const std::string& text) {
    return dir_.Write(name, text);
  }
  void SetUp() override {
    nodes_ = Write("bench_nodes.csv",
                   "sn,cpu_milli,memory_mib,gpu,model\n"
                   "n0,64000,262144,4,T4\n"
                   "n1,32000,131072,2,P100\n");
    std::string pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
    for (int i = 0; i < 12; ++i) {
      pods += "p" + std::to_string(i) + ",4000,8192," + (i % 4 == 0 ? "2,1000" : "1,450") + ",\n";
    }
    pods_ = Write("bench_pods.csv", pods);
  }
  gleaner::testing::TempDir dir_;
  std::string nodes_;
  std::string pods_;
};

TEST_F(BenchBinaryTest, FragJsonHasEveryPercentAsAKey) {
  const CommandRun r = Gleaner("bench frag --json --policy fgd --seed 7 --tune 1.3 --pods " +
                               pods_ + " --nodes " + nodes_);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["policy"], "fgd");
  ASSERT_TRUE(doc["allocation_pct"].is_object());
  EXPECT_EQ(doc["allocation_pct"].size(), 131u);
  for (int x = 0; x <= 130; ++x) {
    const std::string key = std::to_string(x);
    ASSERT_TRUE(doc["allocation_pct"].contains(key)) << key;
    EXPECT_GE(doc["allocation_pct"][key].get<double>(), 0.0);
    EXPECT_LE(doc["allocation_pct"][key].get<double>(), 100.0);
  }
  EXPECT_GT(doc["allocation_pct"]["130"].get<double>(), 50.0);
  EXPECT_GE(doc["wall_s"].get<double>(), 0.0);
}

TEST_F(BenchBinaryTest, FragTableEveryTenPercent) {
  const CommandRun r =
      Gleaner("bench frag --policy bestfit --pods " + pods_ + " --nodes " + nodes_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("arrived %   GPU allocated %"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      130 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wall time"), std::string::npos) << r.out;
}

TEST_F(BenchBinaryTest, DirtyRowNamesFileAndLine) {
  const std::string bad = Write("bench_bad.csv",
                                "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                                "p0,4000,8192,1,450,\n"
                                "p1,4000,8192,one,450,\n");
  const CommandRun r = Gleaner("bench frag --pods " + bad + " --nodes " + nodes_);
  EXPECT_EQ(WEXITSTATUS(r.status), 4) << r.out;
  EXPECT_NE(
      r.out.find("bench_bad.csv:3: column num_gpu: expected an integer from 0 to 8, got \"one\""),
      std::string::npos)
      << r.out;
}

TEST_F(BenchBinaryTest, UnknownPolicyIsAUsageError) {
  const CommandRun r =
      Gleaner("bench frag --policy worstfit --pods " + pods_ + " --nodes " + nodes_);
  EXPECT_EQ(WEXITSTATUS(r.status), 2) << r.out;
}

TEST_F(BenchBinaryTest, FragDrawsAWorkloadVariantAndAveragesRuns) {
  const CommandRun r = Gleaner(
      "bench frag --json --workload gpushare60 --workload-seed 3 --runs 3 "
      "--pods " +
      pods_ + " --nodes " + nodes_);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["workload"], "gpushare60");
  EXPECT_EQ(doc["runs"], 3);
  // 3 whole-GPU pairs (6,000 milli) and 9 shares of 450 (4,050): 60 % of
  // the same 10,050 from shares is 13 of them, 4,000 left for 2 pairs.
  EXPECT_EQ(doc["pods"], 15);
  // The mean of three runs is what three single runs average to.
  double sum = 0;
  for (int seed = 42; seed <= 44; ++seed) {
    const CommandRun one =
        Gleaner("bench frag --json --workload gpushare60 --workload-seed 3 --seed " +
                std::to_string(seed) + " --pods " + pods_ + " --nodes " + nodes_);
    ASSERT_EQ(one.status, 0) << one.out;
    sum += nlohmann::json::parse(one.out)["allocation_pct"]["130"].get<double>();
  }
  EXPECT_NEAR(doc["allocation_pct"]["130"].get<double>(), sum / 3, 1e-9);
}

TEST_F(BenchBinaryTest, AnUnknownWorkloadSaysWhatIsAccepted) {
  const CommandRun r =
      Gleaner("bench frag --workload gpushare --pods " + pods_ + " --nodes " + nodes_);
  EXPECT_EQ(WEXITSTATUS(r.status), 4) << r.out;
  EXPECT_NE(r.out.find("unknown workload \"gpushare\"; use one of: default, cpuNNN"),
            std::string::npos)
      << r.out;
  // Nothing to draw: the pods have no multi-GPU pod.
  const std::string single = Write("bench_single.csv",
                                   "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                                   "p0,4000,8192,1,450,\n");
  const CommandRun none =
      Gleaner("bench frag --workload multigpu50 --pods " + single + " --nodes " + nodes_);
  EXPECT_EQ(WEXITSTATUS(none.status), 4) << none.out;
  EXPECT_NE(none.out.find("needs multi-GPU pods to draw from"), std::string::npos) << none.out;
}

TEST(BenchSchedBinaryTest, JsonHasRatesLatenciesAndMemory) {
  for (const char* mode : {"", " --gang", " --preempt"}) {
    const CommandRun r = Gleaner(
        std::string("bench sched --json --nodes 50 --gpus-per-node 8 --pending 1000") + mode);
    ASSERT_EQ(r.status, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    EXPECT_GT(doc["placements"].get<int64_t>(), 0) << mode;
    EXPECT_GT(doc["placements_per_s"].get<double>(), 0) << mode;
    EXPECT_GT(doc["p50_us"].get<double>(), 0) << mode;
    EXPECT_GE(doc["p99_us"].get<double>(), doc["p50_us"].get<double>()) << mode;
    EXPECT_GT(doc["rss_bytes"].get<int64_t>(), 1 << 20) << mode;
  }
  // 400 GPUs and 1,000 single-GPU jobs: every GPU is filled.
  const CommandRun r = Gleaner("bench sched --json --nodes 50 --gpus-per-node 8 --pending 1000");
  EXPECT_EQ(nlohmann::json::parse(r.out)["placements"], 400);
}

// The scenarios that bench/sched_bench.cc timed, now one program's: each
// event counted as what it decided.
TEST(BenchSchedBinaryTest, EveryScenarioDecidesOnceAnEvent) {
  const struct {
    const char* args;
    int64_t decisions;
    int64_t events;
  } cases[] = {
      // 1,000 jobs wait; 50 nodes of 8 register: every GPU filled, 8 a node.
      {"--scenario nodes-added --pending 1000", 400, 50},
      {"--scenario gangs --gang-size 4 --events 30", 30, 30},
      {"--scenario multi-node-gangs --gang-size 2 --events 30", 30, 30},
      // The last fifth of 50 nodes is half free: 10 gangs, each on a node
      // of its own whose victims never leave.
      {"--scenario preempt-gangs --events 10", 10, 10},
  };
  for (const auto& c : cases) {
    const CommandRun r =
        Gleaner(std::string("bench sched --json --nodes 50 --gpus-per-node 8 ") + c.args);
    ASSERT_EQ(r.status, 0) << c.args << "\n" << r.out;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["placements"], c.decisions) << c.args;
    EXPECT_EQ(doc["events"], c.events) << c.args;
    EXPECT_GE(doc["p99_us"].get<double>(), doc["p50_us"].get<double>()) << c.args;
  }
  // An 11th gang finds no half-free node left: said, not timed as another
  // kind of decision.
  const CommandRun none =
      Gleaner("bench sched --nodes 50 --gpus-per-node 8 --scenario preempt-gangs --events 11");
  EXPECT_EQ(WEXITSTATUS(none.status), 1) << none.out;
  EXPECT_NE(none.out.find("not half a node's 4"), std::string::npos) << none.out;
  const CommandRun unknown = Gleaner("bench sched --scenario fastest");
  EXPECT_EQ(WEXITSTATUS(unknown.status), 2) << unknown.out;
  EXPECT_NE(unknown.out.find("expected verdicts, nodes-added, preempt"), std::string::npos)
      << unknown.out;
  const CommandRun wide = Gleaner("bench sched --nodes 5 --scenario gangs --gang-size 16");
  EXPECT_EQ(WEXITSTATUS(wide.status), 2) << wide.out;
  EXPECT_NE(wide.out.find("more than a node's 8 GPUs"), std::string::npos) << wide.out;
}

}  // namespace
