#pragma once

#include <optional>
#include <string>

#include "observe/verdict.h"

namespace gleaner::observe {

// Why a lent GPU must be given back now (another user's process, a
// protected user or command, unhealthy, reserved), or nullopt.
std::optional<std::string> ClaimOf(const Verdict& verdict);

// Whether gleaner may lend a GPU on this verdict: a free GPU when it is
// Idle, or held idle with memory to lend beside its holder; one that a placed gleaner job holds for
// as long as nobody claims it back. The daemon (agent::NodeAgent) and the simulator
// (sim::RunHarvest) both decide by this rule.
bool MayLend(const Verdict& verdict, bool held_by_placed_job);

// A held-idle GPU that may lend memory beside its holder.
bool LendableBeside(const Verdict& verdict);
// What a GPU lends beside its holder (held idle, or shared), or zero: the
// GPU is lent whole or not at all.
core::Bytes LendMemory(const Verdict& verdict);

}  // namespace gleaner::observe
