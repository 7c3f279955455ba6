// Scenario files, as `gleaner gpus --fake FILE` reads them: the parser, then
// the in-process fake backend playing the scenario (snapshots now, later,
// in the past, and the topology), which is where a parsed scenario's
// indices and times are used.

#include "core/clock.h"
#include "fuzz/fuzz_support.h"
#include "gpu/fake_backend.h"
#include "gpu/scenario.h"

namespace gleaner::fuzz {
namespace {

void Play(std::string_view text) {
  core::Result<gpu::Scenario> scenario = gpu::ParseScenario(text, "fuzz.json");
  if (!scenario.ok()) return;
  core::ManualClock clock;
  auto backend = gpu::FakeBackend::Create(std::move(*scenario), clock);
  if (!backend.ok()) return;
  gpu::FakeBackend& fake = **backend;
  (void)fake.Topology();
  for (const int64_t step_s : {0, 1, 59, 3600, 86400 * 30}) {
    clock.Advance(core::Seconds(step_s));
    (void)fake.Snapshot();
  }
  (void)fake.Recall(core::Seconds(90));
  (void)fake.Recall(core::Seconds(86400 * 365));
}

}  // namespace
}  // namespace gleaner::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gleaner::fuzz::Play(gleaner::fuzz::AsText(data, size));
  return 0;
}
