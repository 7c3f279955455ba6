#include "observe/holder_ask.h"

namespace gleaner::observe {

std::string_view HolderAskName(HolderAsk ask) {
  switch (ask) {
    case HolderAsk::kKeep:
      return "keep";
    case HolderAsk::kUnpark:
      return "unpark";
    case HolderAsk::kGiveUp:
      return "give-up";
    case HolderAsk::kKill:
      return "kill";
  }
  return "keep";
}

std::optional<HolderAsk> ParseHolderAsk(std::string_view name) {
  for (HolderAsk a : {HolderAsk::kKeep, HolderAsk::kUnpark, HolderAsk::kGiveUp, HolderAsk::kKill}) {
    if (HolderAskName(a) == name) return a;
  }
  return std::nullopt;
}

}  // namespace gleaner::observe
