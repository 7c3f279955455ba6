#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gleaner::cost {

// How much work one GPU of a model does in an hour, beside an A100's.
struct GpuSpeed {
  double relative_to_a100 = 1;
  std::string source;
};

// The published default for a catalog model ("T4", "V100-32GB",
// "H100-80GB-PCIe"; the openb trace's "V100M16" too): peak dense FP16
// Tensor Core throughput from NVIDIA's datasheets (plain FP16 for P100,
// which has no Tensor Cores) over the A100's 312 TFLOPS. Peaks overstate
// what newer GPUs gain on real training (docs/cost.md says by how much),
// so a site that measured its own sets [cost.speed]. nullopt for a model
// not listed.
std::optional<GpuSpeed> PublishedGpuSpeed(std::string_view catalog_model);

}  // namespace gleaner::cost
