#include "observe/holder_ask.h"

#include "core/enum_names.h"

namespace gleaner::observe {

constexpr auto kHolderAskNames = core::MakeEnumNames<HolderAsk>(
    {
        {HolderAsk::kKeep, "keep"},
        {HolderAsk::kUnpark, "unpark"},
        {HolderAsk::kGiveUp, "give-up"},
        {HolderAsk::kKill, "kill"},
    },
    "keep");

std::string_view HolderAskName(HolderAsk ask) { return kHolderAskNames.Name(ask); }

std::optional<HolderAsk> ParseHolderAsk(std::string_view name) {
  return kHolderAskNames.Parse(name);
}

}  // namespace gleaner::observe
