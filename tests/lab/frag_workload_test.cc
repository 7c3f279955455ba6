// The FGD paper's workload variants drawn from a base pod list: names,
// the share each variant promises, what they refuse, and that a seed
// gives the same draw.
#include "lab/frag_workload.h"

#include <gtest/gtest.h>

#include <set>

namespace gleaner::sched {
namespace {

FragPodSpec Spec(const std::string& name, int num_gpu, int milli, int64_t cpu = 4000) {
  FragPodSpec p;
  p.name = name;
  p.cpu_milli = cpu;
  p.memory_mib = 1024;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  return p;
}

// 100 pods: 20 without GPUs, 40 sharing (300 milli), 35 whole single GPUs,
// 5 of 8 GPUs (64 cores: only the big nodes hold them).
std::vector<FragPodSpec> Base() {
  std::vector<FragPodSpec> pods;
  for (int i = 0; i < 20; ++i) pods.push_back(Spec("c" + std::to_string(i), 0, 0));
  for (int i = 0; i < 40; ++i) pods.push_back(Spec("s" + std::to_string(i), 1, 300));
  for (int i = 0; i < 35; ++i) pods.push_back(Spec("w" + std::to_string(i), 1, 1000));
  for (int i = 0; i < 5; ++i) pods.push_back(Spec("m" + std::to_string(i), 8, 1000, 64'000));
  return pods;
}

std::vector<FragNodeSpec> Nodes() {
  return {{"big", 96'000, 1 << 20, 8, "G2"},
          {"v16", 32'000, 1 << 20, 4, "V100M16"},
          {"v32", 48'000, 1 << 20, 4, "V100M32"},
          {"t4", 104'000, 1 << 20, 2, "T4"}};
}

int64_t GpuMilli(const std::vector<FragPodSpec>& pods, bool (*pick)(const FragPodSpec&)) {
  int64_t sum = 0;
  for (const FragPodSpec& p : pods) {
    if (pick(p)) sum += p.total_gpu_milli();
  }
  return sum;
}

bool AnyGpu(const FragPodSpec& p) { return p.num_gpu > 0; }
bool Sharing(const FragPodSpec& p) { return p.num_gpu == 1 && p.gpu_milli < 1000; }
bool Multi(const FragPodSpec& p) { return p.num_gpu > 1; }
bool Pinned(const FragPodSpec& p) { return !p.gpu_models.empty(); }

TEST(FragWorkloadTest, NamesAreTheAuthorsFileNames) {
  auto cpu = lab::ParseFragVariant("cpu250");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->kind, lab::FragVariant::Kind::kNonGpu);
  EXPECT_DOUBLE_EQ(cpu->share, 0.25);
  auto share = lab::ParseFragVariant("gpushare60");
  ASSERT_TRUE(share.ok());
  EXPECT_EQ(share->kind, lab::FragVariant::Kind::kGpuShare);
  EXPECT_DOUBLE_EQ(share->share, 0.6);
  EXPECT_DOUBLE_EQ(lab::ParseFragVariant("multigpu50")->share, 0.5);
  EXPECT_EQ(lab::ParseFragVariant("gpuspec33")->kind, lab::FragVariant::Kind::kGpuSpec);
  EXPECT_EQ(lab::ParseFragVariant("default")->kind, lab::FragVariant::Kind::kDefault);
  for (const char* bad : {"", "cpu", "gpushare", "gpushare6x", "multigpu0", "gpuspec101", "cpu1001",
                          "gpushare-5", "fancy40"}) {
    auto v = lab::ParseFragVariant(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.status().message().find(bad), std::string::npos) << v.status().message();
  }
  EXPECT_NE(lab::ParseFragVariant("fancy40").status().message().find("gpushareNN"),
            std::string::npos);
}

TEST(FragWorkloadTest, GpuShareAndMultiGpuKeepTheDemandAndShiftItsShare) {
  const std::vector<FragPodSpec> base = Base();
  const int64_t demand = GpuMilli(base, AnyGpu);
  using Pick = bool (*)(const FragPodSpec&);
  for (auto [name, pick] : {std::pair<const char*, Pick>{"gpushare60", Sharing},
                            std::pair<const char*, Pick>{"multigpu50", Multi}}) {
    auto v = lab::ParseFragVariant(name);
    ASSERT_TRUE(v.ok());
    auto pods = lab::MakeFragWorkload(base, Nodes(), *v, 7);
    ASSERT_TRUE(pods.ok()) << pods.status().ToString();
    // Each part stops short of its budget by less than its largest pod:
    // the shares' 300 or the 8-GPU pods' 8,000.
    const double budget = v->share * static_cast<double>(demand);
    const double rest = static_cast<double>(demand) - budget;
    const double largest_a = pick == Sharing ? 300 : 8000;
    const double largest_b = pick == Sharing ? 8000 : 1000;
    const double a = static_cast<double>(GpuMilli(*pods, pick));
    const double total = static_cast<double>(GpuMilli(*pods, AnyGpu));
    EXPECT_LE(a, budget) << name;
    EXPECT_GT(a, budget - largest_a) << name;
    EXPECT_LE(total - a, rest) << name;
    EXPECT_GT(total - a, rest - largest_b) << name;
    int cpu_only = 0;
    for (const FragPodSpec& p : *pods) cpu_only += p.num_gpu == 0;
    EXPECT_EQ(cpu_only, 20) << name;  // kept as they are
    auto again = lab::MakeFragWorkload(base, Nodes(), *v, 7);
    auto other = lab::MakeFragWorkload(base, Nodes(), *v, 8);
    ASSERT_TRUE(again.ok() && other.ok());
    const auto names = [](const std::vector<FragPodSpec>& ps) {
      std::vector<std::string> out;
      for (const FragPodSpec& p : ps) out.push_back(p.name);
      return out;
    };
    EXPECT_EQ(names(*again), names(*pods)) << name;  // a seed gives one draw
    EXPECT_NE(names(*other), names(*pods)) << name;
  }
}

TEST(FragWorkloadTest, CpuVariantsSetTheShareOfPodsWithoutGpus) {
  auto v = lab::ParseFragVariant("cpu250");
  ASSERT_TRUE(v.ok());
  auto pods = lab::MakeFragWorkload(Base(), Nodes(), *v, 3);
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods->size(), 100u);
  int cpu_only = 0;
  for (const FragPodSpec& p : *pods) cpu_only += p.num_gpu == 0;
  EXPECT_EQ(cpu_only, 25);
}

TEST(FragWorkloadTest, GpuSpecPinsAShareOfRequestsToFamiliesThatCanHostThem) {
  auto v = lab::ParseFragVariant("gpuspec33");
  ASSERT_TRUE(v.ok());
  const std::vector<FragPodSpec> base = Base();
  auto pods = lab::MakeFragWorkload(base, Nodes(), *v, 11);
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods->size(), base.size());
  const double demand = static_cast<double>(GpuMilli(*pods, AnyGpu));
  const double pinned = static_cast<double>(GpuMilli(*pods, Pinned));
  EXPECT_LE(pinned / demand, 0.33 + 1e-9);
  EXPECT_GT(pinned / demand, 0.33 - 8000 / demand);  // short by less than one large pod
  std::set<std::vector<std::string>> families;
  int pinned_whole_nodes = 0;
  for (const FragPodSpec& p : *pods) {
    if (p.gpu_models.empty()) continue;
    EXPECT_GT(p.num_gpu, 0);
    families.insert(p.gpu_models);
    // 8-GPU pods of 64 cores fit only the G2 node.
    if (p.num_gpu == 8) {
      ++pinned_whole_nodes;
      EXPECT_EQ(p.gpu_models, std::vector<std::string>{"G2"});
    }
  }
  EXPECT_GT(pinned_whole_nodes, 0);
  // A V100 pin names both V100s, as openb's own gpu_spec does.
  EXPECT_TRUE(families.count({"V100M16", "V100M32"})) << families.size();
  EXPECT_EQ(lab::GpuFamily("V100M32"), "V100");
  EXPECT_EQ(lab::GpuFamily("T4"), "T4");
  EXPECT_EQ(lab::GpuFamily("M60"), "M60");
}

TEST(FragWorkloadTest, AVariantWithNothingToDrawFromSaysSo) {
  std::vector<FragPodSpec> whole_only;
  for (int i = 0; i < 10; ++i) whole_only.push_back(Spec("w" + std::to_string(i), 1, 1000));
  for (const char* name : {"gpushare60", "multigpu50", "cpu100"}) {
    auto pods = lab::MakeFragWorkload(whole_only, Nodes(), *lab::ParseFragVariant(name), 1);
    ASSERT_FALSE(pods.ok()) << name;
    EXPECT_NE(pods.status().message().find("the base pod list has none"), std::string::npos);
  }
  auto same = lab::MakeFragWorkload(whole_only, Nodes(), *lab::ParseFragVariant("default"), 1);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->size(), whole_only.size());
}

}  // namespace
}  // namespace gleaner::sched
