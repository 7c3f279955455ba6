#pragma once

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "observe/quiet_spell_model.h"
#include "observe/verdict.h"

namespace gleaner::observe {

// A verdict as JSON: {"state", "since", "at" (RFC 3339), "evidence": {...}}.
// Durations are seconds; absent readings are null. The schema is part of
// `gleaner gpus --json` (docs/gpus-json.md).
nlohmann::json VerdictToJson(const Verdict& v);
core::Result<Verdict> VerdictFromJson(const nlohmann::json& j);

// What the pause model learned, as kept across restarts: one [stayed
// quiet, total, pauses] triple per bucket (a pair, from before pauses were
// counted, reads as total pauses). Anything else (a damaged row) is an
// error.
nlohmann::json PauseModelToJson(const QuietSpellModel& model);
core::Result<QuietSpellModel> PauseModelFromJson(const nlohmann::json& j);

// RFC 3339 UTC with milliseconds, "2026-11-29T18:53:47.120Z".

}  // namespace gleaner::observe
