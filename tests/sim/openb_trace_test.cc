// The openb readers: clean files parse; every kind of dirty row is an error
// that names the file, the line and what was expected.
#include "sim/openb_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

namespace gleaner::sim {
namespace {

class OpenbTraceTest : public ::testing::Test {
 protected:
  // Each test its own directory: ctest runs tests side by side.
  std::string Write(const std::string& name, const std::string& text) {
    return dir_.Write(name, text);
  }
  gleaner::testing::TempDir dir_;
  // The error for a pod file whose third line is `row`.
  std::string PodError(const std::string& row) {
    const std::string path = Write("pods.csv",
                                   "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
                                   "p0,1000,1024,1,500,,LS\n" +
                                       row + "\n");
    auto pods = ReadOpenbPods(path);
    EXPECT_FALSE(pods.ok()) << row;
    return pods.ok() ? "" : pods.status().message();
  }
};

TEST_F(OpenbTraceTest, ReadsNodesByColumnName) {
  const std::string path = Write("nodes.csv",
                                 "model,sn,gpu,cpu_milli,memory_mib\r\n"
                                 "G2,n0,8,96000,393216\r\n"
                                 "\r\n"
                                 ",n1,0,32000,262144\r\n");
  auto nodes = ReadOpenbNodes(path);
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "n0");
  EXPECT_EQ((*nodes)[0].model, "G2");
  EXPECT_EQ((*nodes)[0].gpus, 8);
  EXPECT_EQ((*nodes)[0].cpu_milli, 96000);
  EXPECT_EQ((*nodes)[0].memory_mib, 393216);
  EXPECT_EQ((*nodes)[1].gpus, 0);
}

TEST_F(OpenbTraceTest, ReadsPodsWithModelListsAndCpuOnlyPods) {
  const std::string path = Write("pods.csv",
                                 "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"
                                 "a,88000,327680,8,1000,,Burstable\n"
                                 "b,4000,15258,1,220,nan,BE\n"
                                 "c,16000,32768,1,1000,V100M16|V100M32,LS\n"
                                 "d,2000,4096,0,0,,LS\n");
  auto pods = ReadOpenbPods(path);
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->size(), 4u);
  EXPECT_EQ((*pods)[0].total_gpu_milli(), 8000);
  EXPECT_TRUE((*pods)[1].fractional());
  EXPECT_TRUE((*pods)[1].gpu_models.empty());
  EXPECT_EQ((*pods)[2].gpu_models, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ((*pods)[3].total_gpu_milli(), 0);
}

TEST_F(OpenbTraceTest, DirtyPodRowsNameFileLineAndExpectation) {
  std::string e = PodError("p1,1000,1024,x,500,,LS");
  EXPECT_NE(e.find("pods.csv:3: column num_gpu: expected an integer from 0 to 8, got \"x\""),
            std::string::npos)
      << e;
  e = PodError("p1,1000,1024,9,1000,,LS");
  EXPECT_NE(e.find(":3: column num_gpu"), std::string::npos) << e;
  e = PodError("p1,1000,1024,1,1200,,LS");
  EXPECT_NE(e.find(":3: column gpu_milli: expected an integer from 0 to 1000, got \"1200\""),
            std::string::npos)
      << e;
  e = PodError("p1,-5,1024,1,500,,LS");
  EXPECT_NE(e.find(":3: column cpu_milli"), std::string::npos) << e;
  e = PodError("p1,1000,,1,500,,LS");
  EXPECT_NE(e.find(":3: column memory_mib"), std::string::npos) << e;
  e = PodError("p1,1000,1024,1,500");
  EXPECT_NE(e.find(":3: expected 7 comma-separated fields as in the header, got 5"),
            std::string::npos)
      << e;
  e = PodError("p1,1000,1024,2,500,,LS");
  EXPECT_NE(e.find(":3: column gpu_milli: pod p1 asks for 2 GPUs of 500 milli"), std::string::npos)
      << e;
  e = PodError("p1,1000,1024,1,0,,LS");
  EXPECT_NE(e.find("share of 0"), std::string::npos) << e;
}

TEST_F(OpenbTraceTest, DirtyNodeRowsAndHeaders) {
  auto nodes = ReadOpenbNodes(Write("n.csv",
                                    "sn,cpu_milli,memory_mib,gpu,model\n"
                                    "n0,8000,32768,1,V100M16\n"
                                    "n1,8000,32768,2,\n"));
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.status().message().find("n.csv:3: column model: node n1 has 2 GPUs but no model"),
            std::string::npos)
      << nodes.status().message();

  nodes = ReadOpenbNodes(Write("n.csv", "sn,cpu_milli,memory_mib,gpus,model\nn0,1,1,1,T4\n"));
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.status().message().find("n.csv:1: the header has no column \"gpu\""),
            std::string::npos)
      << nodes.status().message();

  nodes = ReadOpenbNodes(Write("n.csv", ""));
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.status().message().find("n.csv:1: the file is empty"), std::string::npos);

  nodes = ReadOpenbNodes("/nonexistent/nodes.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), core::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gleaner::sim
