#pragma once

#include <iosfwd>
#include <string>

#include "observe/idle_config.h"
#include "views/host_view.h"

namespace gleaner::cli {

// `gleaner gpus --explain GPU`: the full reasoning behind one GPU's
// verdict. `which` is an index, a UUID or a UUID prefix. Returns an exit
// code; an unknown or ambiguous GPU is a usage error.
int Explain(const views::HostView& view, const std::string& which,
            const observe::IdleConfig& config, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
