#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "agent/sampler.h"
#include "core/mutex.h"
#include "metrics/histogram.h"

namespace gleaner::agent {

// Jobs by state, as the store counts them when /metrics is read.
struct JobCounts {
  std::map<std::string, int64_t> by_state;  // "pending_approval", "queued", ... "vacating"
  // Submit to start, where this process schedules (the coordinator's).
  std::optional<metrics::Histogram::Snapshot> scheduling_latency;
  // In shadow mode: what harvesting would have done.
  struct Shadow {
    int64_t starts = 0;
    int64_t gpus_now = 0;
    double gpu_seconds = 0;
  };
  std::optional<Shadow> shadow;
  // The policy version running (gleaner up keeps them).
  std::optional<int64_t> policy_version{};
};

// What an owned GPU-hour of a model costs, for the idle-cost gauge; keyed
// by the driver's GPU name.
struct IdleCostPrices {
  std::string currency = "USD";
  std::map<std::string, double> owned_per_gpu_hour;
};

// The host's metrics for Prometheus (docs/metrics.md): the sampling loop
// feeds each pass and the node agent its events; the API thread renders.
// Thread-safe.
class HostMetrics {
 public:
  // `daemon`: which one serves them (up, monitor, agent), for
  // gleaner_build_info.
  explicit HostMetrics(std::string hostname, std::string daemon = "up");

  // A pass over the GPUs: the latest readings and verdicts, and the time
  // since the previous pass credited to each GPU's previous state.
  void Observe(const HostPass& pass, core::Duration max_gap);

  // A running job asked to leave: "owner_returned", "protected", "reserved",
  // "unhealthy" (the GPU's claim), "scheduler" (room for another job) or
  // "coordinator_lost" (the agent's lease ran out) or
  // "beyond_declared_memory" (killed: it used more beside a holder than it
  // declared).
  void Preempted(std::string_view reason);
  void GaveBack(core::Duration after_claim);  // from the claim to the GPUs free

  // Parking a held-idle GPU's holder (docs/held-idle.md): "notice",
  // "refused" (it computed, was kept or opted out within the notice),
  // "parked", "park_failed", "restored", "restore_failed" or "exited"
  // (gone while parked).
  void Parking(std::string_view event);
  // From its wake (or the ask) to the holder restored: how long it waited.
  void HolderRestored(core::Duration waited);

  // The text exposition. `dcgm`: also dcgm-exporter's names for the
  // readings, so dashboards built on them work unchanged.
  std::string Render(const JobCounts& jobs, const IdleCostPrices& prices, bool dcgm) const;

 private:
  struct GpuTime {
    std::map<observe::GpuState, double> seconds;
    std::optional<core::TimePoint> last_at;
    observe::GpuState last_state = observe::GpuState::kUnknown;
  };

  const std::string hostname_;
  const std::string daemon_;
  mutable core::Mutex mu_;
  std::optional<HostPass> latest_ GLEANER_GUARDED_BY(mu_);
  std::map<core::GpuUuid, GpuTime> state_time_ GLEANER_GUARDED_BY(mu_);
  std::map<std::string, double> preemptions_ GLEANER_GUARDED_BY(mu_);
  metrics::Histogram owner_return_;  // thread-safe itself: observed without mu_
  std::map<std::string, double> parking_ GLEANER_GUARDED_BY(mu_);
  metrics::Histogram holder_wait_;  // thread-safe itself: observed without mu_
};

}  // namespace gleaner::agent
