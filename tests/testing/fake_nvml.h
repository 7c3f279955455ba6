#pragma once

#include <dlfcn.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "gpu/nvml/nvml_backend.h"
#include "testing/temp_dir.h"

namespace gleaner::testing {

// One variant of the fake libnvidia-ml.so.1 (tools/fake_nvml), opened by the
// real NvmlBackend with a scenario of the test's choosing.
class FakeNvml {
 public:
  // `variant`: legacy, v2, modern, r535 or r535_misdetected. `scenario`:
  // JSON text, or a built-in scenario's name.
  FakeNvml(std::string variant, const std::string& scenario) : variant_(std::move(variant)) {
    const bool is_json = scenario.find('{') != std::string::npos;
    setenv("GLEANER_FAKE_NVML_SCENARIO",
           is_json ? dir_.Write("scenario.json", scenario).c_str() : scenario.c_str(), 1);
    unsetenv("GLEANER_FAKE_NVML_TIME_S");
  }

  std::string library() const {
    return std::string(GLEANER_FAKE_NVML_DIR) + "/" + variant_ + "/libnvidia-ml.so.1";
  }

  core::Result<std::unique_ptr<gpu::NvmlBackend>> Open() const {
    return gpu::NvmlBackend::Create(library());
  }

  // Moves the scenario to `seconds` in; the backend must be open.
  void SetTime(double seconds) const {
    void* handle = dlopen(library().c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) std::abort();
    auto set = reinterpret_cast<void (*)(double)>(dlsym(handle, "gleanerFakeNvmlSetTime"));
    set(seconds);
    dlclose(handle);
  }

 private:
  std::string variant_;
  TempDir dir_;
};

}  // namespace gleaner::testing
