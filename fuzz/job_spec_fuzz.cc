// The body of POST /v1/jobs, as JobApi::Submit reads it: JSON, then the
// spec, then its validation. A spec that passes is stored as its own JSON
// and read back by every later step, so it must survive that unchanged.

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_support.h"
#include "sched/job_spec.h"

namespace gleaner::fuzz {
namespace {

using nlohmann::json;

void Submit(std::string_view body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) return;
  const core::Result<sched::JobSpec> spec = sched::JobSpecFromJson(doc);
  if (!spec.ok()) return;
  if (!sched::ValidateJobSpec(*spec, sched::JobLimits{}).ok()) return;
  const int64_t tasks = spec->array ? spec->array->size() : 1;
  Require(tasks >= 1, "a valid spec has at least one task");

  const json stored = json::parse(sched::JobSpecToJson(*spec).dump(), nullptr, false);
  Require(!stored.is_discarded(), "a valid spec's JSON parses");
  const core::Result<sched::JobSpec> back = sched::JobSpecFromJson(stored);
  Require(back.ok(), "a valid spec's JSON is a spec");
  Require(*back == *spec, "a valid spec survives its JSON unchanged");
}

}  // namespace
}  // namespace gleaner::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gleaner::fuzz::Submit(gleaner::fuzz::AsText(data, size));
  return 0;
}
