#include "cli/gpu_source.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "cli/exit_codes.h"
#include "core/sha256.h"
#include "gpu/fake_backend.h"
#include "gpu/fault_memory.h"
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

std::string GpuFaultFile(const std::string& data_dir) { return data_dir + "/gpu-faults.json"; }

void RememberGpuFaults(const std::string& data_dir, const core::Clock& clock,
                       std::function<void(const std::string&)> log, GpuSource* source) {
  if (source->scenario_inspector != nullptr) return;  // simulated
  source->backend =
      std::make_unique<gpu::FaultMemory>(std::move(source->backend), GpuFaultFile(data_dir),
                                         gpu::CurrentBootId(), clock, std::move(log));
}

std::string DataDir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("GLEANER_DATA_DIR"); env && *env) return env;
  if (geteuid() == 0) return kSystemDataDir;
  // The XDG base directories: only an absolute $XDG_DATA_HOME counts.
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && xdg[0] == '/') {
    return std::string(xdg) + "/gleaner";
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/gleaner";
}

std::string ClientDataDir(const std::string& flag) {
  const std::string own = DataDir(flag);
  const char* env = std::getenv("GLEANER_DATA_DIR");
  if (!flag.empty() || (env != nullptr && *env) || geteuid() == 0) return own;
  std::error_code ec;
  if (std::filesystem::exists(own + "/gleaner.sock", ec)) return own;
  if (std::filesystem::exists(std::string(kSystemDataDir) + "/gleaner.sock", ec)) {
    return kSystemDataDir;
  }
  return own;
}

}  // namespace gleaner::cli
