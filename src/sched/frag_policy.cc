#include "sched/frag_policy.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "sched/frag_measure.h"
#include "sched/seeded_random.h"

namespace gleaner::sched {

double BestFitScore(const FragNodeState& node, const FragPod& pod) {
  // The authors' normalisers: the largest node's CPU and GPUs.
  constexpr double kMaxCpuMilli = 128'000;
  constexpr double kMaxGpuMilli = 8'000;
  const double cpu_left = static_cast<double>(node.cpu_free - pod.cpu_milli);
  const double gpu_left = static_cast<double>(node.TotalGpuFree() - pod.total_gpu_milli());
  return 1.0 - (0.5 * cpu_left / kMaxCpuMilli + 0.5 * gpu_left / kMaxGpuMilli);
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

namespace {

// The seeded order in which nodes are visited; the first of equal scores wins.
std::vector<uint32_t> TieOrder(size_t nodes, uint64_t seed) {
  std::vector<uint32_t> order(nodes);
  std::iota(order.begin(), order.end(), 0u);
  SeededRandom rng(seed ^ 0x7469652D6F726465ull);
  rng.Shuffle(order);
  return order;
}

class RandomPolicy final : public FragPolicy {
 public:
  explicit RandomPolicy(uint64_t seed) : rng_(seed ^ 0x72616E646F6D2121ull) {}

  std::optional<FragPlacement> Place(const FragPod& pod, const FragCluster& cluster) override {
    std::optional<uint32_t> chosen;
    uint64_t seen = 0;
    for (uint32_t n = 0; n < cluster.size(); ++n) {
      if (!cluster.node(n).Fits(pod)) continue;
      if (rng_.Below(++seen) == 0) chosen = n;  // reservoir: each fitting node alike
    }
    if (!chosen) return std::nullopt;
    const FragNodeState& node = cluster.node(*chosen);
    if (!pod.fractional()) return FragPlacement{*chosen, TightestGpus(node, pod)};
    uint64_t fitting = 0;
    int gpu = 0;
    for (int i = 0; i < node.gpus; ++i) {
      if (node.gpu_free[static_cast<size_t>(i)] >= pod.gpu_milli && rng_.Below(++fitting) == 0) {
        gpu = i;
      }
    }
    return FragPlacement{*chosen, static_cast<uint8_t>(1u << gpu)};
  }
  std::string_view Name() const override { return "random"; }

 private:
  SeededRandom rng_;
};

// Visits fitting nodes in the tie order and keeps the first best score.
class ScoringPolicy : public FragPolicy {
 public:
  ScoringPolicy(size_t nodes, uint64_t seed) : order_(TieOrder(nodes, seed)) {}

  std::optional<FragPlacement> Place(const FragPod& pod, const FragCluster& cluster) override {
    std::optional<FragPlacement> best;
    Score best_score{};
    for (uint32_t n : order_) {
      const FragNodeState& node = cluster.node(n);
      if (!node.Fits(pod)) continue;
      uint8_t mask = 0;
      const Score s = ScoreNode(cluster, n, pod, &mask);
      if (!best || s > best_score) {
        best = FragPlacement{n, mask};
        best_score = s;
      }
    }
    return best;
  }

 protected:
  // Compared in order: the first component decides, the second breaks ties.
  struct Score {
    double primary = 0;
    double secondary = 0;
    bool operator>(const Score& o) const {
      return primary != o.primary ? primary > o.primary : secondary > o.secondary;
    }
  };
  // Scores node `n`, which fits, and sets the GPUs the pod would take there.
  virtual Score ScoreNode(const FragCluster& cluster, uint32_t n, const FragPod& pod,
                          uint8_t* mask) = 0;

 private:
  std::vector<uint32_t> order_;
};

class BestFitPolicy final : public ScoringPolicy {
 public:
  using ScoringPolicy::ScoringPolicy;
  std::string_view Name() const override { return "bestfit"; }

 protected:
  Score ScoreNode(const FragCluster& cluster, uint32_t n, const FragPod& pod,
                  uint8_t* mask) override {
    const FragNodeState& node = cluster.node(n);
    *mask = TightestGpus(node, pod);
    // The authors' plugin returns an integer 0..100, so near scores tie.
    return {std::trunc(BestFitScore(node, pod) * 100), 0};
  }
};

// FGD: the fragmentation the placement removes from the node (negative when
// it adds some). A fractional pod tries each GPU it fits on.
class FgdPolicy : public ScoringPolicy {
 public:
  FgdPolicy(size_t nodes, uint64_t seed, std::vector<TypicalShape> shapes)
      : ScoringPolicy(nodes, seed), meter_(std::move(shapes)), before_(nodes) {
    // trunc(100 sigmoid(d / 1000)) >= k  <=>  d >= 1000 logit(k / 100): the
    // integer score is a count of thresholds passed, with no exp per node.
    for (int k = 1; k < 100; ++k) {
      const double q = k / 100.0;
      thresholds_.push_back(1000 * std::log(q / (1 - q)));
    }
  }
  std::string_view Name() const override { return "fgd"; }

 protected:
  // The authors' integer score of a fragmentation drop.
  virtual Score FromDrop(double drop_milli, const FragNodeState& /*node*/,
                         const FragPod& /*pod*/) const {
    return {
        static_cast<double>(std::upper_bound(thresholds_.begin(), thresholds_.end(), drop_milli) -
                            thresholds_.begin()),
        0};
  }

  Score ScoreNode(const FragCluster& cluster, uint32_t n, const FragPod& pod,
                  uint8_t* mask) override {
    const FragNodeState& node = cluster.node(n);
    const double before = Before(cluster, n);
    if (!pod.fractional()) {
      *mask = TightestGpus(node, pod);
      return FromDrop(before - meter_.Of(AfterPlacing(node, pod, *mask)), node, pod);
    }
    std::optional<Score> best;
    for (int i = 0; i < node.gpus; ++i) {
      if (node.gpu_free[static_cast<size_t>(i)] < pod.gpu_milli) continue;
      const auto m = static_cast<uint8_t>(1u << i);
      const Score s = FromDrop(before - meter_.Of(AfterPlacing(node, pod, m)), node, pod);
      if (!best || s > *best) {
        best = s;
        *mask = m;
      }
    }
    return *best;
  }

 private:
  // The node's fragmentation now, computed again only after it changed.
  double Before(const FragCluster& cluster, uint32_t n) {
    Cached& c = before_[n];
    if (!c.valid || c.version != cluster.version(n)) {
      c = {true, cluster.version(n), meter_.Of(cluster.node(n))};
    }
    return c.frag;
  }

  struct Cached {
    bool valid = false;
    uint64_t version = 0;
    double frag = 0;
  };
  FragmentationMeter meter_;
  std::vector<Cached> before_;
  std::vector<double> thresholds_;
};

// gleaner: FGD, with two changes that look further ahead.
// - The fragmentation counts every request shape of the workload, not only
//   the commonest that make up 95 % of pods: the rare 8-GPU pods that fit
//   only on the largest nodes are what a cluster most often turns away.
// - Among nodes of equal FGD score (the integer score makes many), the one
//   whose free CPU and free GPU come closest to the workload's own ratio of
//   CPU to GPU. A node left with GPUs but no CPU (or the reverse) strands
//   what is left; FGD sees that only through the shapes' CPU checks.
// Unrounded drops were tried as the first key and did worse (docs/fragmentation.md).
class GleanerPolicy final : public FgdPolicy {
 public:
  GleanerPolicy(size_t nodes, uint64_t seed, const std::vector<FragPod>& workload)
      : FgdPolicy(nodes, seed, TypicalShapes(workload, 1.0)) {
    double cpu = 0;
    double gpu = 0;
    for (const FragPod& p : workload) {
      cpu += static_cast<double>(p.cpu_milli);
      gpu += static_cast<double>(p.total_gpu_milli());
    }
    cpu_per_gpu_milli_ = gpu > 0 ? cpu / gpu : 0;
  }
  std::string_view Name() const override { return "gleaner"; }

 protected:
  Score FromDrop(double drop_milli, const FragNodeState& node, const FragPod& pod) const override {
    const double gpu_before = node.TotalGpuFree();
    const double gpu_after = gpu_before - static_cast<double>(pod.total_gpu_milli());
    const double cpu_before = static_cast<double>(node.cpu_free);
    const double cpu_after = cpu_before - static_cast<double>(pod.cpu_milli);
    return {FgdPolicy::FromDrop(drop_milli, node, pod).primary,
            Imbalance(cpu_before, gpu_before) - Imbalance(cpu_after, gpu_after)};
  }

 private:
  // How far a node's free CPU is from what its free GPUs would need at the
  // workload's ratio, in milli-CPU.
  double Imbalance(double cpu_milli, double gpu_milli) const {
    return std::abs(cpu_milli - cpu_per_gpu_milli_ * gpu_milli);
  }
  double cpu_per_gpu_milli_ = 0;
};

}  // namespace

core::Result<std::unique_ptr<FragPolicy>> MakeFragPolicy(std::string_view name,
                                                         const FragCluster& cluster,
                                                         const std::vector<FragPod>& workload,
                                                         uint64_t seed) {
  if (name == "random") return std::unique_ptr<FragPolicy>(new RandomPolicy(seed));
  if (name == "bestfit") {
    return std::unique_ptr<FragPolicy>(new BestFitPolicy(cluster.size(), seed));
  }
  if (name == "fgd") {
    return std::unique_ptr<FragPolicy>(
        new FgdPolicy(cluster.size(), seed, TypicalShapes(workload)));
  }
  if (name == "gleaner") {
    return std::unique_ptr<FragPolicy>(new GleanerPolicy(cluster.size(), seed, workload));
  }
  return core::InvalidArgument("unknown policy \"" + std::string(name) +
                               "\"; use one of: " + std::string(kFragPolicyNames));
}

}  // namespace gleaner::sched
