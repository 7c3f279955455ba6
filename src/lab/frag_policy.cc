#include "lab/frag_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

#include "sched/frag_measure.h"
#include "sched/frag_score.h"
#include "sched/seeded_random.h"

namespace gleaner::lab {

double BestFitScore(const sched::FragNodeState& node, const sched::FragPod& pod) {
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
  sched::SeededRandom rng(seed ^ 0x7469652D6F726465ull);
  rng.Shuffle(order);
  return order;
}

class RandomPolicy final : public FragPolicy {
 public:
  explicit RandomPolicy(uint64_t seed) : rng_(seed ^ 0x72616E646F6D2121ull) {}

  std::optional<sched::FragPlacement> Place(const sched::FragPod& pod,
                                            const sched::FragCluster& cluster) override {
    std::optional<uint32_t> chosen;
    uint64_t seen = 0;
    for (uint32_t n = 0; n < cluster.size(); ++n) {
      if (!cluster.node(n).Fits(pod)) continue;
      if (rng_.Below(++seen) == 0) chosen = n;  // reservoir: each fitting node alike
    }
    if (!chosen) return std::nullopt;
    const sched::FragNodeState& node = cluster.node(*chosen);
    if (!pod.fractional()) return sched::FragPlacement{*chosen, TightestGpus(node, pod)};
    uint64_t fitting = 0;
    int gpu = 0;
    for (int i = 0; i < node.gpus; ++i) {
      if (node.gpu_free[static_cast<size_t>(i)] >= pod.gpu_milli && rng_.Below(++fitting) == 0) {
        gpu = i;
      }
    }
    return sched::FragPlacement{*chosen, static_cast<uint8_t>(1u << gpu)};
  }
  std::string_view Name() const override { return "random"; }

 private:
  sched::SeededRandom rng_;
};

// Visits fitting nodes in the tie order and keeps the first best score.
// A node's score for a request shape changes only when the node does, and
// most pods share a few shapes: scores are kept per shape and node and
// reused until the node's version moves (the same answers, several times
// faster). So a policy serves the one cluster it was made for.
class ScoringPolicy : public FragPolicy {
 public:
  ScoringPolicy(size_t nodes, uint64_t seed) : nodes_(nodes), order_(TieOrder(nodes, seed)) {}

  std::optional<sched::FragPlacement> Place(const sched::FragPod& pod,
                                            const sched::FragCluster& cluster) override {
    BeforePlacing(cluster);
    std::vector<Cached>* cache = CacheFor(pod);
    std::optional<sched::FragPlacement> best;
    Score best_score{};
    for (uint32_t n : order_) {
      const sched::FragNodeState& node = cluster.node(n);
      if (!node.Fits(pod)) continue;
      Cached fresh;
      Cached& c = cache ? (*cache)[n] : fresh;
      if (!c.valid || c.version != cluster.version(n)) {
        c.score = ScoreNode(cluster, n, pod, &c.mask);
        c.version = cluster.version(n);
        c.valid = true;
      }
      const Score s = Adjusted(node, pod, c.score);
      if (!best || s > best_score) {
        best = sched::FragPlacement{n, c.mask};
        best_score = s;
      }
    }
    return best;
  }

 protected:
  // Compared in order: the first component decides, the next break ties.
  struct Score {
    double primary = 0;
    double secondary = 0;
    double tertiary = 0;
    bool operator>(const Score& o) const {
      return std::tie(primary, secondary, tertiary) > std::tie(o.primary, o.secondary, o.tertiary);
    }
  };
  // Scores node `n`, which fits, and sets the GPUs the pod would take
  // there. Must depend only on the node and the pod's shape (CPU, GPUs,
  // share, models): it is reused until the node changes.
  virtual Score ScoreNode(const sched::FragCluster& cluster, uint32_t n, const sched::FragPod& pod,
                          uint8_t* mask) = 0;
  // For what depends on the whole cluster: called once per pod, then on
  // each node's (kept) score.
  virtual void BeforePlacing(const sched::FragCluster& /*cluster*/) {}
  virtual Score Adjusted(const sched::FragNodeState& /*node*/, const sched::FragPod& /*pod*/,
                         Score s) const {
    return s;
  }

 private:
  struct Cached {
    bool valid = false;
    uint64_t version = 0;
    Score score;
    uint8_t mask = 0;
  };
  // Shapes past this many go without (memory: shapes x nodes entries).
  static constexpr size_t kCachedShapes = 256;
  using ShapeKey = std::tuple<int64_t, int, int, uint32_t>;  // CPU, GPUs, share, models

  std::vector<Cached>* CacheFor(const sched::FragPod& pod) {
    const ShapeKey key{pod.cpu_milli, pod.num_gpu, pod.gpu_milli, pod.model_mask};
    auto it = cache_.find(key);
    if (it != cache_.end()) return &it->second;
    if (cache_.size() >= kCachedShapes) return nullptr;
    return &cache_.emplace(key, std::vector<Cached>(nodes_)).first->second;
  }

  size_t nodes_;
  std::vector<uint32_t> order_;
  std::map<ShapeKey, std::vector<Cached>> cache_;
};

class BestFitPolicy final : public ScoringPolicy {
 public:
  using ScoringPolicy::ScoringPolicy;
  std::string_view Name() const override { return "bestfit"; }

 protected:
  Score ScoreNode(const sched::FragCluster& cluster, uint32_t n, const sched::FragPod& pod,
                  uint8_t* mask) override {
    const sched::FragNodeState& node = cluster.node(n);
    *mask = TightestGpus(node, pod);
    // The authors' plugin returns an integer 0..100, so near scores tie.
    return {std::trunc(BestFitScore(node, pod) * 100), 0};
  }
};

// FGD: the fragmentation the placement removes from the node (negative when
// it adds some). A fractional pod tries each GPU it fits on.
class FgdPolicy : public ScoringPolicy {
 public:
  FgdPolicy(size_t nodes, uint64_t seed, std::vector<sched::TypicalShape> shapes)
      : ScoringPolicy(nodes, seed), meter_(std::move(shapes)), before_(nodes) {}
  std::string_view Name() const override { return "fgd"; }

 protected:
  // The score of placing `pod` on `node` with `mask`; `before` is the
  // node's fragmentation now.
  virtual Score Evaluate(const sched::FragNodeState& node, const sched::FragPod& pod, uint8_t mask,
                         double before) {
    return {static_cast<double>(
                sched::FgdIntegerScore(before - meter_.Of(sched::AfterPlacing(node, pod, mask)))),
            0, 0};
  }

  Score ScoreNode(const sched::FragCluster& cluster, uint32_t n, const sched::FragPod& pod,
                  uint8_t* mask) override {
    const sched::FragNodeState& node = cluster.node(n);
    const double before = Before(cluster, n);
    if (!pod.fractional()) {
      *mask = TightestGpus(node, pod);
      return Evaluate(node, pod, *mask, before);
    }
    std::optional<Score> best;
    for (int i = 0; i < node.gpus; ++i) {
      if (node.gpu_free[static_cast<size_t>(i)] < pod.gpu_milli) continue;
      const auto m = static_cast<uint8_t>(1u << i);
      const Score s = Evaluate(node, pod, m, before);
      if (!best || s > *best) {
        best = s;
        *mask = m;
      }
    }
    return *best;
  }

  const sched::FragmentationMeter& meter() const { return meter_; }

 private:
  // The node's fragmentation now, computed again only after it changed.
  double Before(const sched::FragCluster& cluster, uint32_t n) {
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
  sched::FragmentationMeter meter_;
  std::vector<Cached> before_;
};

// `of(node)` summed over the nodes of each model id.
template <typename Of>
std::vector<int64_t> SumByModel(const sched::FragCluster& cluster, Of of) {
  std::vector<int64_t> sums(static_cast<size_t>(cluster.model_count()), 0);
  for (uint32_t n = 0; n < cluster.size(); ++n) {
    sums[static_cast<size_t>(cluster.node(n).model)] += of(cluster.node(n));
  }
  return sums;
}

// gleaner: FGD's search with gleaner's score (sched/frag_score.h), the
// workload profiled from the experiment's pods.
class GleanerPolicy final : public FgdPolicy {
 public:
  GleanerPolicy(size_t nodes, uint64_t seed, sched::WorkloadProfile profile)
      : FgdPolicy(nodes, seed, profile.shapes), profile_(std::move(profile)) {}
  std::string_view Name() const override { return "gleaner"; }

 protected:
  // Which models are oversubscribed moves as they fill: judged per pod.
  void BeforePlacing(const sched::FragCluster& cluster) override {
    oversubscribed_ = sched::OversubscribedModels(
        profile_,
        SumByModel(cluster, [](const sched::FragNodeState& n) { return n.TotalGpuFree(); }));
  }
  Score Evaluate(const sched::FragNodeState& node, const sched::FragPod& pod, uint8_t mask,
                 double before) override {
    const sched::GleanerScore s =
        sched::ScorePlacement(node, pod, mask, before, meter(), profile_, false);
    return {0, static_cast<double>(s.fgd), s.shortage_drop};
  }
  Score Adjusted(const sched::FragNodeState& node, const sched::FragPod& pod,
                 Score s) const override {
    s.primary = sched::AvoidModel(pod, oversubscribed_[static_cast<size_t>(node.model)]);
    return s;
  }

 private:
  sched::WorkloadProfile profile_;
  std::vector<bool> oversubscribed_;
};

}  // namespace

core::Result<std::unique_ptr<FragPolicy>> MakeFragPolicy(
    std::string_view name, const sched::FragCluster& cluster,
    const std::vector<sched::FragPod>& workload, uint64_t seed) {
  if (name == "random") return std::unique_ptr<FragPolicy>(new RandomPolicy(seed));
  if (name == "bestfit") {
    return std::unique_ptr<FragPolicy>(new BestFitPolicy(cluster.size(), seed));
  }
  if (name == "fgd") {
    return std::unique_ptr<FragPolicy>(
        new FgdPolicy(cluster.size(), seed, sched::TypicalShapes(workload)));
  }
  if (name == "gleaner") {
    return std::unique_ptr<FragPolicy>(new GleanerPolicy(
        cluster.size(), seed,
        sched::ProfileWorkload(
            workload, SumByModel(cluster, [](const sched::FragNodeState& n) { return n.gpus; }))));
  }
  return core::InvalidArgument("unknown policy \"" + std::string(name) +
                               "\"; use one of: " + std::string(kFragPolicyNames));
}

}  // namespace gleaner::lab
