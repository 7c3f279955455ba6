#pragma once

#include <string>

#include "views/host_view.h"

namespace gleaner::views {

// The human view of `gleaner gpus`: a row per GPU, a row per process under
// it, and (when the view has topology) a pairwise matrix like `nvidia-smi
// topo -m`. "n/a" marks readings the GPU does not support; "ERR" marks
// readings that failed.
std::string GpusToTable(const HostView& view);

}  // namespace gleaner::views
