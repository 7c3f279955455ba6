#pragma once

#include <optional>
#include <string>

#include "observe/verdict.h"

namespace gleaner::observe {

// Why a lent GPU must be given back now (another user's process, a
// protected user or command, unhealthy, reserved), or nullopt.
std::optional<std::string> ClaimOf(const Verdict& verdict);

// Whether gleaner may lend a GPU on this verdict: a free GPU when it is
// Idle; one that a placed gleaner job holds for as long as nobody claims it
// back. The daemon (agent::NodeAgent) and the simulator (sim::RunHarvest)
// both decide by this rule.
bool MayLend(const Verdict& verdict, bool held_by_placed_job);

}  // namespace gleaner::observe
