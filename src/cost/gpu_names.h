#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gleaner::cost {

// The catalog model a driver's GPU name stands for, so that the GPUs a
// host reports can be priced: "NVIDIA H100 80GB HBM3" -> "H100-80GB",
// "NVIDIA A100-SXM4-40GB" -> "A100-40GB", "Tesla V100-SXM2-16GB" ->
// "V100-16GB", "NVIDIA GeForce RTX 4090" -> "RTX4090", "NVIDIA L4" -> "L4".
// Where the catalog tells models of a family apart by memory (A100, V100,
// H100, H200) and the name does not say it, the memory the driver reports
// picks the nearest size. A name of no known family comes back with the
// vendor words dropped; gleaner.toml's [cost.gpu_models] maps it by hand.
std::string CatalogModelOfGpuName(std::string_view driver_name,
                                  std::optional<uint64_t> memory_total_bytes);

}  // namespace gleaner::cost
