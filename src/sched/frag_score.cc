#include "sched/frag_score.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

namespace gleaner::sched {

WorkloadProfile ProfileWorkload(const std::vector<FragPod>& pods,
                                const std::vector<int64_t>& model_gpus) {
  WorkloadProfile profile;
  profile.shapes = TypicalShapes(pods, 0.95, /*every_multi_gpu=*/true);
  const size_t models = std::min<size_t>(model_gpus.size(), 32);  // masks hold 32 models
  profile.pinned_share.assign(models, 0);
  size_t present = 0;
  for (size_t m = 0; m < models; ++m) present += model_gpus[m] > 0;
  double cpu = 0;
  double gpu = 0;
  for (const FragPod& p : pods) {
    if (p.num_gpu == 0) continue;
    cpu += static_cast<double>(p.cpu_milli);
    gpu += static_cast<double>(p.total_gpu_milli());
    size_t allowed = 0;
    for (size_t m = 0; m < models; ++m) allowed += (p.model_mask >> m & 1u) && model_gpus[m] > 0;
    if (allowed == 0 || allowed == present) continue;  // runs nowhere, or anywhere
    for (size_t m = 0; m < models; ++m) {
      if ((p.model_mask >> m & 1u) && model_gpus[m] > 0) {
        profile.pinned_share[m] +=
            static_cast<double>(p.total_gpu_milli()) / static_cast<double>(allowed);
      }
    }
  }
  for (double& s : profile.pinned_share) s = gpu > 0 ? s / gpu : 0;
  profile.cpu_per_gpu_milli = gpu > 0 ? cpu / gpu : 0;
  return profile;
}

double CpuShortage(const FragNodeState& node, double cpu_per_gpu_milli) {
  return std::max(0.0,
                  cpu_per_gpu_milli * node.TotalGpuFree() - static_cast<double>(node.cpu_free));
}

std::vector<bool> OversubscribedModels(const WorkloadProfile& profile,
                                       const std::vector<int64_t>& free_milli) {
  int64_t total = 0;
  for (int64_t f : free_milli) total += f;
  std::vector<bool> out(free_milli.size(), false);
  for (size_t m = 0; m < free_milli.size() && m < profile.pinned_share.size(); ++m) {
    const double pinned = profile.pinned_share[m];
    if (pinned <= 0) continue;
    // pinned >= free_m / total, without dividing by a model with nothing free.
    out[m] = pinned * static_cast<double>(total) >= static_cast<double>(free_milli[m]);
  }
  return out;
}

int FgdIntegerScore(double drop_milli) {
  // trunc(100 sigmoid(d / 1000)) >= k  <=>  d >= 1000 logit(k / 100): the
  // score is a count of thresholds passed, with no exp per candidate.
  static const std::array<double, 99> kThresholds = [] {
    std::array<double, 99> t{};
    for (size_t k = 1; k < 100; ++k) {
      const double q = static_cast<double>(k) / 100.0;
      t[k - 1] = 1000 * std::log(q / (1 - q));
    }
    return t;
  }();
  return static_cast<int>(std::upper_bound(kThresholds.begin(), kThresholds.end(), drop_milli) -
                          kThresholds.begin());
}

int AvoidModel(const FragPod& pod, bool oversubscribed) {
  return pod.num_gpu > 0 && oversubscribed ? -1 : 0;
}

bool operator>(const GleanerScore& a, const GleanerScore& b) {
  return std::tie(a.avoid_model, a.fgd, a.shortage_drop) >
         std::tie(b.avoid_model, b.fgd, b.shortage_drop);
}

GleanerScore ScorePlacement(const FragNodeState& before, const FragPod& pod, uint8_t gpu_mask,
                            double fragmentation_before, const FragmentationMeter& meter,
                            const WorkloadProfile& profile, bool oversubscribed) {
  const FragNodeState after = AfterPlacing(before, pod, gpu_mask);
  GleanerScore s;
  s.fgd = FgdIntegerScore(fragmentation_before - meter.Of(after));
  if (pod.num_gpu == 0) return s;
  s.avoid_model = AvoidModel(pod, oversubscribed);
  // Pods without GPUs are left to FGD: steering them by GPU need piles
  // them where CPUs are plentiful, which on CPU-heavy workloads strands
  // more GPUs than it saves (docs/fragmentation.md).
  s.shortage_drop = CpuShortage(before, profile.cpu_per_gpu_milli) -
                    CpuShortage(after, profile.cpu_per_gpu_milli);
  return s;
}

}  // namespace gleaner::sched
