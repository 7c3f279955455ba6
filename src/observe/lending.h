#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// Why a free quiet GPU is not lent for its forecast: its quiet is expected
// to last less than `min` at 80 %. Empty: it may be lent (no forecast, or
// `min` zero, lends).
std::string ShortQuietBlock(const std::optional<QuietForecast>& forecast, core::Duration min);

// A held-idle GPU that may lend memory beside its holder.
bool LendableBeside(const Verdict& verdict);
// What a GPU lends beside its holder (held idle, or shared), or zero: the
// GPU is lent whole or not at all.
core::Bytes LendMemory(const Verdict& verdict);

// [rules.lend] of gleaner.toml, for a pilot: only these hosts' GPUs, and
// these GPUs ("HOST:INDEX", or a UUID), may be lent; both empty: all.
struct LendAllowList {
  std::vector<std::string> hosts;
  std::vector<std::string> gpus;
  bool Allows(const std::string& host, uint32_t index, const core::GpuUuid& uuid) const;
  bool operator==(const LendAllowList&) const = default;
};

}  // namespace gleaner::observe
