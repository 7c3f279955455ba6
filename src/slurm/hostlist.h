#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gleaner::slurm {

// Slurm's compressed host list ("gpu[01-03,7],login1") as names, in order.
// kInvalidArgument for unbalanced brackets, a bad range, or more than
// `limit` names (a list from Slurm is untrusted text).
core::Result<std::vector<std::string>> ExpandHostlist(std::string_view list, size_t limit = 100000);

// The GPU indices in one node's GRES detail: "gpu:2(IDX:0-1)",
// "gpu:a100:2(IDX:0,2)", or several types joined by commas. Entries that
// are not GPUs (mps, shard) are skipped. kInvalidArgument for a GPU entry
// whose index list cannot be read.
core::Result<std::vector<uint32_t>> ParseGresIndices(std::string_view detail);

}  // namespace gleaner::slurm
