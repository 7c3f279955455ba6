#include "cost/gpu_speed.h"

#include <cstdio>

namespace gleaner::cost {
namespace {

struct Peak {
  std::string_view prefix;  // of the catalog model; the first match wins
  double tflops;            // dense FP16 (Tensor Core where the GPU has them)
  std::string_view datasheet;
};

constexpr double kA100Tflops = 312;

// Longer names first where one is a prefix of another (L40S before L4,
// H100-80GB-PCIe before H100, A100 before A10).
// clang-format off
constexpr Peak kPeaks[] = {
    {"H200", 989, "H200 SXM"},
    {"H100-80GB-PCIe", 756, "H100 PCIe"},
    {"H100", 989, "H100 SXM"},
    {"A100", 312, "A100"},
    {"L40S", 362, "L40S"},
    {"L4", 121, "L4"},
    {"A10G", -1, ""},  // AWS's own variant: no NVIDIA datasheet figure
    {"A10", 125, "A10"},
    {"V100", 125, "V100 SXM2"},
    {"T4", 65, "T4"},
    {"P100", 21.2, "P100 SXM2, FP16 without Tensor Cores"},
};
// clang-format on

}  // namespace

std::optional<GpuSpeed> PublishedGpuSpeed(std::string_view model) {
  for (const Peak& p : kPeaks) {
    if (!model.starts_with(p.prefix)) continue;
    // L4 must not also match L40S's rows, nor A10 an A100 (caught above).
    if (p.prefix == "L4" && model.size() > 2 && model[2] != '-') return std::nullopt;
    if (p.tflops < 0) return std::nullopt;
    char source[160];
    std::snprintf(source, sizeof source,
                  "NVIDIA %s datasheet: %g TFLOPS dense FP16 peak over the A100's %g",
                  std::string(p.datasheet).c_str(), p.tflops, kA100Tflops);
    return GpuSpeed{p.tflops / kA100Tflops, source};
  }
  return std::nullopt;
}

}  // namespace gleaner::cost
