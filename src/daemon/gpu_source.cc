#include "daemon/gpu_source.h"

#include <cstdlib>
#include <filesystem>

#include "core/private_file.h"
#include "gpu/fault_memory.h"
#include "gpu/nvml/nvml_library.h"

namespace gleaner::daemon {

std::optional<std::string> WhyNotSimulate(const std::string& nvml_library, bool config_file,
                                          const std::string& dev, const std::string& proc) {
  if (gpu::nvml::NvmlLibrary::Open(nvml_library).ok()) {
    return "its NVML library (" + nvml_library + ") is installed";
  }
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dev, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with("nvidia")) return dev + "/" + name + " exists: this host has NVIDIA GPUs";
  }
  if (std::filesystem::exists(proc + "/driver/nvidia", ec)) {
    return proc + "/driver/nvidia exists: the NVIDIA kernel module is loaded";
  }
  for (const char* service : {"INVOCATION_ID", "NOTIFY_SOCKET"}) {
    if (const char* v = std::getenv(service); v != nullptr && *v != '\0') {
      return std::string("it runs as a service ($") + service + " is set)";
    }
  }
  if (config_file) return "it has a config file";
  return std::nullopt;
}

core::Status CheckGpuSourceKind(const std::string& data_dir, const GpuSource& source, bool accept) {
  const std::string path = data_dir + "/gpu-source";
  const std::string now = source.scenario_inspector != nullptr ? "fake" : "nvml";
  const core::Result<std::string> was = core::ReadPrivateFile(path);
  if (!was.ok() && was.status().code() != core::StatusCode::kNotFound) return was.status();
  const std::string before = was.ok() ? was->substr(0, was->find('\n')) : "";
  if (before == now) return core::Status::Ok();
  const auto says = [](const std::string& kind) {
    return kind == "fake" ? std::string("simulated GPUs (--fake)") : "the NVIDIA driver (NVML)";
  };
  if (!before.empty() && !accept) {
    return core::FailedPrecondition(
        data_dir + " holds history read from " + says(before) + ", and this gleaner reads " +
        says(now) +
        ": the two would mix. Use another --data-dir, or start once with "
        "--accept-gpu-source to write " +
        says(now) + "'s readings there from now on");
  }
  return core::WritePrivateFile(path, now + "\n");
}

std::string GpuFaultFile(const std::string& data_dir) { return data_dir + "/gpu-faults.json"; }

void RememberGpuFaults(const std::string& data_dir, const core::Clock& clock,
                       std::function<void(const std::string&)> log, GpuSource* source) {
  if (source->scenario_inspector != nullptr) return;  // simulated
  source->backend =
      std::make_unique<gpu::FaultMemory>(std::move(source->backend), GpuFaultFile(data_dir),
                                         gpu::CurrentBootId(), clock, std::move(log));
}

}  // namespace gleaner::daemon
