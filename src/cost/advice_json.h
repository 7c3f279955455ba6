#pragma once

#include <nlohmann/json.hpp>

#include "cost/advisor.h"

namespace gleaner::cost {

// The advice as `gleaner cost advise --json` and GET /v1/cost/advise give
// it (docs/cost.md): the request, each option with its arithmetic, the
// recommendation and the warnings.
nlohmann::ordered_json AdviceToJson(const AdviceRequest& request, const Advice& advice);

}  // namespace gleaner::cost
