#pragma once

#include <optional>
#include <string_view>

// What a person asks of a GPU's holder, as `gleaner keep` and `gleaner
// unpark` say it, and as the API and the agent protocol carry it by name.
namespace gleaner::observe {

enum class HolderAsk {
  kKeep,    // not parked until it computes again (its user, or root)
  kUnpark,  // its parked holder back now (its user, or root)
  kGiveUp,  // root: stop restoring a parked holder; it stays frozen in host
            // memory for its user to end, and its GPU is free
  kKill,    // root: give up on it and end it (SIGKILL)
};

// "keep", "unpark", "give-up", "kill".
std::string_view HolderAskName(HolderAsk ask);
std::optional<HolderAsk> ParseHolderAsk(std::string_view name);

// Giving up ends gleaner's care of a parked holder: root's alone.
inline bool GivesUp(HolderAsk ask) { return ask == HolderAsk::kGiveUp || ask == HolderAsk::kKill; }

}  // namespace gleaner::observe
