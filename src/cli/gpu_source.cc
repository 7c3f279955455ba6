#include "cli/gpu_source.h"

#include <ostream>

#include "cli/exit_codes.h"
#include "core/sha256.h"
#include "gpu/fake_backend.h"
#include "gpu/nvml/nvml_backend.h"

namespace gleaner::cli {

int OpenGpuSource(const std::string& fake, const std::string& nvml_library,
                  const core::Clock& clock, const agent::ProcessInspector& host_inspector,
                  std::ostream& err, GpuSource* source, const std::string& uuid_salt) {
  source->inspector = &host_inspector;
  if (fake.empty()) {
    auto nvml = gpu::NvmlBackend::Create(nvml_library);
    if (!nvml.ok()) {
      err << "gleaner: " << nvml.status().message() << "\n";
      return kExitNoDriver;
    }
    source->backend = std::move(nvml).value();
    return kExitOk;
  }
  auto scenario = gpu::LoadScenario(fake);
  if (!scenario.ok()) {
    err << "gleaner: " << scenario.status().message() << "\n";
    return kExitBadInput;
  }
  if (!uuid_salt.empty()) {
    for (gpu::ScenarioGpu& g : scenario->gpus) {
      const std::string h = core::Sha256Hex(uuid_salt + ":" + g.uuid);
      g.uuid = "GPU-" + h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" +
               h.substr(16, 4) + "-" + h.substr(20, 12);
    }
  }
  source->scenario_inspector =
      std::make_unique<agent::ScenarioProcessInspector>(*scenario, host_inspector);
  source->inspector = source->scenario_inspector.get();
  auto backend = gpu::FakeBackend::Create(std::move(scenario).value(), clock);
  if (!backend.ok()) {
    err << "gleaner: " << backend.status().message() << "\n";
    return kExitNoDriver;
  }
  source->backend = std::move(backend).value();
  return kExitOk;
}

}  // namespace gleaner::cli
