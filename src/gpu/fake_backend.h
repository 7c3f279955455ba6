#pragma once

#include <map>
#include <memory>
#include <vector>

#include "core/clock.h"
#include "gpu/gpu_backend.h"
#include "gpu/scenario.h"

namespace gleaner::gpu {

// A GpuBackend that plays a Scenario in process: the GPUs look, at clock time
// t, as the scenario says they look `t - start` seconds in. It reports what
// the NVML backend reports for the same scenario through the fake
// libnvidia-ml.so.1 (a parity test holds the two together), so the demo and
// the simulator see exactly what the daemon would. The clock must outlive the
// backend. Not thread-safe.
class FakeBackend final : public GpuBackend {
 public:
  // Fails as NVML would when the scenario's driver fails to initialise.
  static core::Result<std::unique_ptr<FakeBackend>> Create(Scenario scenario,
                                                           const core::Clock& clock);

  const DriverInfo& Driver() const override { return driver_; }
  core::Result<std::vector<GpuSnapshot>> Snapshot() override;
  // The scenario's past: before its start a periodic scenario repeats, and
  // an aperiodic one looks as it does at 0.
  core::Result<std::vector<GpuSnapshot>> Recall(core::Duration ago) override;
  core::Result<std::vector<GpuLink>> Topology() override;

  const Scenario& scenario() const { return scenario_; }

  // A process that opens a context on GPU `index` after the scenario was
  // written (a test's real job process, whose pid nobody knew): listed from
  // now on, as given, until it leaves.
  void Join(uint32_t index, ScenarioProcess process);
  void Leave(uint32_t index, uint32_t pid);

 private:
  FakeBackend(Scenario scenario, const core::Clock& clock);
  double ElapsedSeconds() const;
  std::vector<GpuSnapshot> SnapshotAt(double t_s) const;

  Scenario scenario_;
  const core::Clock& clock_;
  core::TimePoint start_;
  DriverInfo driver_;
  std::vector<GpuSnapshot> attached_;  // identity as read when the backend started
  std::map<uint32_t, std::vector<ScenarioProcess>> joined_;  // by GPU index
};

}  // namespace gleaner::gpu
