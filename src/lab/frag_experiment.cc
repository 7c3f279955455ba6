#include "lab/frag_experiment.h"

#include <cmath>

#include "lab/frag_policy.h"
#include "sched/seeded_random.h"

namespace gleaner::lab {

std::vector<size_t> ArrivalOrder(const std::vector<sched::FragPodSpec>& pods,
                                 int64_t capacity_milli, double tune, uint64_t seed) {
  sched::SeededRandom rng(seed);
  std::vector<size_t> order(pods.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  rng.Shuffle(order);
  const auto target =
      static_cast<int64_t>(std::llround(tune * static_cast<double>(capacity_milli)));
  int64_t requested = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t next = pods[order[k]].total_gpu_milli();
    if (requested + next > target) {
      order.resize(k);
      return order;
    }
    requested += next;
  }
  if (pods.empty()) return order;
  // Clones of pods without GPUs request nothing and never end the loop on
  // their own; a bound keeps a workload of only such pods finite.
  for (size_t draws = 0; draws < 100 * pods.size() + 1'000'000; ++draws) {
    const size_t i = rng.Below(pods.size());
    if (requested + pods[i].total_gpu_milli() > target) break;
    requested += pods[i].total_gpu_milli();
    order.push_back(i);
  }
  return order;
}

core::Result<FragCurve> RunFragExperiment(const std::vector<sched::FragNodeSpec>& nodes,
                                          const std::vector<sched::FragPodSpec>& pods,
                                          const FragExperimentConfig& config) {
  if (!(config.tune > 0 && config.tune <= 10)) {
    return core::InvalidArgument("tune must be in (0, 10]; the paper uses 1.3");
  }
  for (const sched::FragPodSpec& p : pods) {
    if (p.num_gpu < 0 || p.num_gpu > sched::kFragMaxGpusPerNode || p.gpu_milli < 0 ||
        p.gpu_milli > 1000 || (p.num_gpu > 1 && p.gpu_milli < 1000 && p.gpu_milli != 0)) {
      return core::InvalidArgument("pod " + p.name + " asks for " + std::to_string(p.num_gpu) +
                                   " GPUs of " + std::to_string(p.gpu_milli) +
                                   " milli each; expected 0-8 GPUs, a share of 1-1000 milli, "
                                   "and shares below 1000 only for one GPU");
    }
  }
  core::Result<sched::FragCluster> built = sched::FragCluster::Build(nodes);
  if (!built.ok()) return built.status();
  sched::FragCluster cluster = std::move(built).value();
  const int64_t capacity = cluster.gpu_capacity_milli();
  if (capacity == 0) return core::InvalidArgument("the cluster has no GPUs; nothing to allocate");

  std::vector<sched::FragPod> workload;
  workload.reserve(pods.size());
  for (const sched::FragPodSpec& p : pods) workload.push_back(cluster.Resolve(p));
  auto policy = MakeFragPolicy(config.policy, cluster, workload, config.seed);
  if (!policy.ok()) return policy.status();

  const std::vector<size_t> order = ArrivalOrder(pods, capacity, config.tune, config.seed);
  const auto columns = static_cast<size_t>(std::floor(config.tune * 100 + 1e-9)) + 1;
  std::vector<double> sum(columns + 1, 0);
  std::vector<int64_t> count(columns + 1, 0);

  FragCurve curve;
  curve.policy = std::string((*policy)->Name());
  curve.gpu_capacity_milli = capacity;
  curve.clones = static_cast<int64_t>(order.size()) -
                 static_cast<int64_t>(std::min(order.size(), pods.size()));
  int64_t arrived = 0;
  for (size_t i : order) {
    const sched::FragPod& pod = workload[i];
    arrived += pod.total_gpu_milli();
    if (auto p = (*policy)->Place(pod, cluster)) {
      cluster.Apply(pod, *p);
    } else {
      ++curve.pods_failed;
    }
    const auto x = static_cast<size_t>(
        std::llround(100.0 * static_cast<double>(arrived) / static_cast<double>(capacity)));
    const double y =
        100.0 * static_cast<double>(cluster.gpu_allocated_milli()) / static_cast<double>(capacity);
    const size_t col = std::min(x, columns);  // past the last column: counted there
    sum[col] += y;
    ++count[col];
  }
  curve.pods_arrived = static_cast<int64_t>(order.size());
  curve.gpu_allocated_milli = cluster.gpu_allocated_milli();

  curve.allocation_pct.resize(columns);
  for (size_t c = 0; c < columns; ++c) {
    if (count[c] > 0) {
      curve.allocation_pct[c] = sum[c] / static_cast<double>(count[c]);
      continue;
    }
    // No pod landed on this percent (one large pod can jump two): the
    // neighbours' mean, as the authors' analysis does.
    double s = 0;
    int64_t n = 0;
    for (size_t d : {c - 1, c + 1}) {
      if (c == 0 && d == c - 1) continue;
      s += sum[d];
      n += count[d];
    }
    curve.allocation_pct[c] =
        n > 0 ? s / static_cast<double>(n) : (c > 0 ? curve.allocation_pct[c - 1] : 0);
  }
  return curve;
}

}  // namespace gleaner::lab
