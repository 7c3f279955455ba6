#pragma once

#include "cli/gpus_command.h"

namespace gleaner::cli {

// Parses argv and runs the chosen subcommand; returns the exit code.
int Main(int argc, char** argv, const core::Clock& clock, const agent::ProcessInspector& inspector);

}  // namespace gleaner::cli
