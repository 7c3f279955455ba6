#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/frag_cluster.h"

namespace gleaner::lab {

// Workload variants of the FGD paper's evaluation (Weng et al., ATC'23,
// sec. 6), each resampled from a base pod list (openb_pod_list_default) so
// that one kind of pod weighs more. The names are the authors' file names,
// so a variant's figures sit beside their published curves:
//   cpuNNN      non-GPU pods are NNN per mille of the pods (cpu250: 25 %)
//   gpushareNN  GPU-sharing pods (one GPU, a share below 1000) ask for NN %
//               of the GPU requests
//   multigpuNN  pods of two or more GPUs ask for NN % of the GPU requests
//   gpuspecNN   pods pinned to a GPU model ask for NN % of the GPU requests
//   default     the base, unchanged
// How each is drawn is in frag_workload.cc and docs/fragmentation.md; the
// authors' own samples are not used (they are held out for evaluation).
struct FragVariant {
  enum class Kind { kDefault, kNonGpu, kGpuShare, kMultiGpu, kGpuSpec };
  Kind kind = Kind::kDefault;
  double share = 0;  // 0..1: of the pods (kNonGpu) or of the GPU requests
  std::string name = "default";
};

// The variant names ParseFragVariant knows, for help texts and errors.
inline constexpr std::string_view kFragVariantForms =
    "default, cpuNNN (per mille of pods), gpushareNN, multigpuNN, gpuspecNN (percent of GPU "
    "requests)";

// InvalidArgument naming the accepted forms for anything else, or a share
// of 0 or above 100 %.
core::Result<FragVariant> ParseFragVariant(std::string_view name);

// Draws the variant from `base` with `seed`. `nodes` tells which GPU models
// can host a pod (gpuspec). InvalidArgument when the base has no pod of a
// kind the variant needs (say, no multi-GPU pod to draw from).
core::Result<std::vector<sched::FragPodSpec>> MakeFragWorkload(
    const std::vector<sched::FragPodSpec>& base, const std::vector<sched::FragNodeSpec>& nodes,
    const FragVariant& variant, uint64_t seed);

// A model's family: the name without a trailing memory size ("V100M32" ->
// "V100"), so a pinned pod accepts both V100s as openb's own gpu_spec does.
std::string GpuFamily(std::string_view model);

}  // namespace gleaner::lab
