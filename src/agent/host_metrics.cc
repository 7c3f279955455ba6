#include "agent/host_metrics.h"

#include <tuple>

#include "cluster/agent_protocol.h"
#include "metrics/exposition.h"

namespace gleaner::agent {
namespace {

using metrics::Labels;
using observe::GpuState;

constexpr GpuState kStates[] = {GpuState::kUnknown,   GpuState::kBusy,      GpuState::kIdle,
                                GpuState::kHeldIdle,  GpuState::kProtected, GpuState::kReserved,
                                GpuState::kHarvested, GpuState::kShared,    GpuState::kUnhealthy};

// Claim to GPU free: the grace period dominates (30 s by default).
std::vector<double> GiveBackBounds() { return {0.5, 1, 2, 5, 10, 20, 30, 45, 60, 120, 300}; }

}  // namespace

HostMetrics::HostMetrics(std::string hostname, std::string daemon)
    : hostname_(std::move(hostname)),
      daemon_(std::move(daemon)),
      owner_return_(GiveBackBounds()),
      holder_wait_(GiveBackBounds()) {}

void HostMetrics::Observe(const HostPass& pass, core::Duration max_gap) {
  core::MutexLock lock(mu_);
  for (const observe::Verdict& v : pass.verdicts) {
    GpuTime& t = state_time_[v.uuid];
    // A gap is nobody's time, as in the minute roll-ups.
    if (t.last_at && pass.at - *t.last_at <= max_gap) {
      t.seconds[t.last_state] += core::ToSecondsDouble(pass.at - *t.last_at);
    }
    t.last_at = pass.at;
    t.last_state = v.state;
  }
  latest_ = pass;
}

void HostMetrics::Preempted(std::string_view reason) {
  core::MutexLock lock(mu_);
  preemptions_[std::string(reason)] += 1;
}

void HostMetrics::GaveBack(core::Duration after_claim) {
  owner_return_.Observe(core::ToSecondsDouble(after_claim));
}

void HostMetrics::Parking(std::string_view event) {
  core::MutexLock lock(mu_);
  parking_[std::string(event)] += 1;
}

void HostMetrics::HolderRestored(core::Duration waited) {
  holder_wait_.Observe(core::ToSecondsDouble(waited));
}

std::string HostMetrics::Render(const JobCounts& jobs, const IdleCostPrices& prices,
                                bool dcgm) const {
  core::MutexLock lock(mu_);
  metrics::Exposition e;
  struct Gpu {
    Labels labels;
    const gpu::GpuSnapshot* snapshot;
    const observe::Verdict* verdict;
  };
  std::vector<Gpu> gpus;
  if (latest_) {
    for (size_t i = 0; i < latest_->snapshots.size() && i < latest_->verdicts.size(); ++i) {
      const gpu::GpuSnapshot& s = latest_->snapshots[i];
      gpus.push_back({{{"gpu", std::to_string(s.index)},
                       {"uuid", latest_->verdicts[i].uuid.str()},
                       {"model", s.name.value_or("")},
                       {"hostname", hostname_}},
                      &s,
                      &latest_->verdicts[i]});
    }
  }
  // A reading the GPU cannot give is left out, never written as 0.
  const auto reading = [&](const char* name, const char* type, const char* help, auto value_of) {
    e.Family(name, type, help);
    for (const Gpu& g : gpus) {
      if (const std::optional<double> v = value_of(*g.snapshot)) e.Sample(name, g.labels, *v);
    }
  };
  reading("gleaner_gpu_utilization_ratio", "gauge",
          "Share of the driver's last window in which a kernel ran (0-1).",
          [](const gpu::GpuSnapshot& s) -> std::optional<double> {
            if (!s.utilization_gpu_pct.has_value()) return std::nullopt;
            return s.utilization_gpu_pct.value() / 100.0;
          });
  reading("gleaner_gpu_memory_used_bytes", "gauge", "GPU memory in use, driver-reserved included.",
          [](const gpu::GpuSnapshot& s) -> std::optional<double> {
            if (!s.memory_used.has_value()) return std::nullopt;
            return static_cast<double>(s.memory_used.value().count());
          });
  reading("gleaner_gpu_memory_total_bytes", "gauge", "GPU memory in all.",
          [](const gpu::GpuSnapshot& s) -> std::optional<double> {
            if (!s.memory_total.has_value()) return std::nullopt;
            return static_cast<double>(s.memory_total.value().count());
          });
  reading("gleaner_gpu_power_watts", "gauge", "Power drawn by the GPU.",
          [](const gpu::GpuSnapshot& s) -> std::optional<double> {
            if (!s.power_draw_w.has_value()) return std::nullopt;
            return s.power_draw_w.value();
          });
  reading("gleaner_gpu_temperature_celsius", "gauge", "GPU core temperature.",
          [](const gpu::GpuSnapshot& s) -> std::optional<double> {
            if (!s.temperature_c.has_value()) return std::nullopt;
            return static_cast<double>(s.temperature_c.value());
          });

  // The driver's error counters (docs/metrics.md, GPU health).
  const auto count_of = [](const auto gpu::GpuErrors::*field) {
    return [field](const gpu::GpuSnapshot& s) -> std::optional<double> {
      const auto& r = s.errors.*field;
      if (!r.has_value()) return std::nullopt;
      return static_cast<double>(r.value());
    };
  };
  e.Family("gleaner_gpu_ecc_errors", "gauge",
           "ECC errors in device memory, by type (corrected, uncorrected) and counter (volatile: "
           "since the driver loaded; aggregate: over the GPU's life).");
  for (const Gpu& g : gpus) {
    const gpu::GpuErrors& x = g.snapshot->errors;
    for (auto [type, counter, count] :
         {std::tuple{"corrected", "volatile", &x.ecc_corrected_volatile},
          std::tuple{"uncorrected", "volatile", &x.ecc_uncorrected_volatile},
          std::tuple{"corrected", "aggregate", &x.ecc_corrected_aggregate},
          std::tuple{"uncorrected", "aggregate", &x.ecc_uncorrected_aggregate}}) {
      if (!count->has_value()) continue;
      Labels l = g.labels;
      l.emplace_back("type", type);
      l.emplace_back("counter", counter);
      e.Sample("gleaner_gpu_ecc_errors", l, static_cast<double>(count->value()));
    }
  }
  reading("gleaner_gpu_pcie_replays", "gauge",
          "PCIe link retransmissions since the driver loaded: a rising count is a bad slot or "
          "riser.",
          count_of(&gpu::GpuErrors::pcie_replays));
  reading("gleaner_gpu_remapped_rows", "gauge",
          "Memory rows remapped for uncorrected ECC errors (Ampere and later).",
          count_of(&gpu::GpuErrors::remapped_rows_uncorrected));
  reading("gleaner_gpu_xid_errors", "gauge",
          "Critical Xid events the driver reported since gleaner attached.",
          count_of(&gpu::GpuErrors::xid_count));
  reading("gleaner_gpu_last_xid", "gauge",
          "The newest critical Xid since gleaner attached (0: none).",
          count_of(&gpu::GpuErrors::last_xid));
  reading("gleaner_gpu_hardware_slowdown", "gauge",
          "1 while the hardware holds the clocks down (slowdown, thermal, power brake).",
          [](const gpu::GpuSnapshot& s) -> std::optional<double> {
            const auto& r = s.errors.clock_event_reasons;
            if (!r.has_value()) return std::nullopt;
            return (r.value() & gpu::kHardwareSlowdownReasons) != 0 ? 1 : 0;
          });
  reading("gleaner_gpu_faulty", "gauge",
          "1 when the driver's errors make the GPU faulty: it is unhealthy and never lent.",
          [](const gpu::GpuSnapshot& s) -> std::optional<double> {
            return s.health == gpu::GpuHealth::kFaulty ? 1 : 0;
          });

  e.Family("gleaner_gpu_state", "gauge",
           "The GPU's verdict as a state set: 1 for its state, 0 for the others.");
  for (const Gpu& g : gpus) {
    for (GpuState s : kStates) {
      Labels l = g.labels;
      l.emplace_back("state", std::string(observe::GpuStateName(s)));
      e.Sample("gleaner_gpu_state", l, g.verdict->state == s ? 1 : 0);
    }
  }
  // Lending beside a quiet holder (docs/held-idle.md): on held-idle and
  // shared GPUs only.
  const auto beside = [&](const char* name, const char* help, auto value_of) {
    e.Family(name, "gauge", help);
    for (const Gpu& g : gpus) {
      if (const auto& b = g.verdict->evidence.beside_holder) {
        if (const std::optional<core::Bytes> v = value_of(*g.verdict, *b)) {
          e.Sample(name, g.labels, static_cast<double>(v->count()));
        }
      }
    }
  };
  beside("gleaner_gpu_lendable_beside_holder_bytes",
         "Memory a held-idle GPU lends beside its holder (0: nothing, the verdict says why); on a "
         "shared GPU, what the job beside it declared.",
         [](const observe::Verdict&, const observe::BesideHolder& b) {
           return std::optional(b.lendable);
         });
  beside("gleaner_gpu_holder_peak_bytes",
         "The holder's peak memory over the learned window: what is kept for it.",
         [](const observe::Verdict&, const observe::BesideHolder& b) {
           return std::optional(b.holder_peak);
         });
  beside("gleaner_gpu_borrower_memory_bytes",
         "Memory the job beside a holder uses now (shared GPUs).",
         [](const observe::Verdict& v, const observe::BesideHolder& b) {
           return v.state == GpuState::kShared ? std::optional(b.borrower_memory) : std::nullopt;
         });
  e.Family("gleaner_gpu_idle_seconds", "gauge",
           "How long the GPU has been idle or held idle; 0 in any other state.");
  for (const Gpu& g : gpus) {
    const bool idle =
        g.verdict->state == GpuState::kIdle || g.verdict->state == GpuState::kHeldIdle;
    e.Sample("gleaner_gpu_idle_seconds", g.labels,
             idle ? core::ToSecondsDouble(latest_->at - g.verdict->since) : 0);
  }
  e.Family("gleaner_gpu_state_seconds_total", "counter",
           "Time the GPU spent in each state since gleaner started; harvested time is "
           "state=\"harvested\".");
  for (const Gpu& g : gpus) {
    const auto t = state_time_.find(g.verdict->uuid);
    for (GpuState s : kStates) {
      Labels l = g.labels;
      l.emplace_back("state", std::string(observe::GpuStateName(s)));
      double seconds = 0;
      if (t != state_time_.end()) {
        if (auto it = t->second.seconds.find(s); it != t->second.seconds.end()) {
          seconds = it->second;
        }
      }
      e.Sample("gleaner_gpu_state_seconds_total", l, seconds);
    }
  }

  e.Family("gleaner_idle_cost_per_hour", "gauge",
           "What this host's idle and held-idle GPUs cost their owners per hour, by GPU model, "
           "at the owned cost per GPU-hour (docs/cost.md).");
  std::map<std::pair<std::string, GpuState>, int> idle_of_model;
  for (const Gpu& g : gpus) {
    if (g.verdict->state == GpuState::kIdle || g.verdict->state == GpuState::kHeldIdle) {
      ++idle_of_model[{g.snapshot->name.value_or(""), g.verdict->state}];
    }
  }
  for (const auto& [model, price] : prices.owned_per_gpu_hour) {
    for (GpuState s : {GpuState::kIdle, GpuState::kHeldIdle}) {
      const auto n = idle_of_model.find({model, s});
      e.Sample("gleaner_idle_cost_per_hour",
               {{"model", model},
                {"state", std::string(observe::GpuStateName(s))},
                {"currency", prices.currency},
                {"hostname", hostname_}},
               (n == idle_of_model.end() ? 0 : n->second) * price);
    }
  }

  e.Family("gleaner_jobs", "gauge", "Jobs that have not ended, by state.");
  for (const char* state : {"pending_approval", "queued", "held", "running", "vacating"}) {
    const auto n = jobs.by_state.find(state);
    e.Sample("gleaner_jobs", {{"state", state}},
             static_cast<double>(n == jobs.by_state.end() ? 0 : n->second));
  }
  e.Family("gleaner_queue_length", "gauge", "Jobs waiting to start.");
  const auto queued = jobs.by_state.find("queued");
  e.Sample("gleaner_queue_length", {},
           static_cast<double>(queued == jobs.by_state.end() ? 0 : queued->second));
  if (jobs.policy_version) {
    e.Family("gleaner_policy_version", "gauge",
             "The policy version running (gleaner policy list; docs/policy.md).");
    e.Sample("gleaner_policy_version", {}, static_cast<double>(*jobs.policy_version));
  }
  if (jobs.shadow) {
    e.Family("gleaner_shadow_would_start_total", "counter",
             "Shadow mode: jobs the scheduler would have started (nothing starts).");
    e.Sample("gleaner_shadow_would_start_total", {}, static_cast<double>(jobs.shadow->starts));
    e.Family("gleaner_shadow_would_run_gpus", "gauge",
             "Shadow mode: GPUs the jobs it would have started would hold now.");
    e.Sample("gleaner_shadow_would_run_gpus", {}, static_cast<double>(jobs.shadow->gpus_now));
    e.Family("gleaner_shadow_would_harvest_gpu_seconds_total", "counter",
             "Shadow mode: idle GPU time those jobs would have used.");
    e.Sample("gleaner_shadow_would_harvest_gpu_seconds_total", {}, jobs.shadow->gpu_seconds);
  }
  if (jobs.scheduling_latency) {
    e.Family("gleaner_scheduling_latency_seconds", "histogram",
             "From a job's submission to its start.");
    e.HistogramSamples("gleaner_scheduling_latency_seconds", {}, *jobs.scheduling_latency);
  }
  e.Family("gleaner_preemptions_total", "counter",
           "Running jobs asked to leave, by why: owner_returned, protected, reserved, unhealthy, "
           "scheduler, coordinator_lost, or beyond_declared_memory (killed beside a holder).");
  for (const char* reason : {"owner_returned", "protected", "reserved", "unhealthy", "scheduler",
                             "coordinator_lost", "beyond_declared_memory"}) {
    const auto n = preemptions_.find(reason);
    e.Sample("gleaner_preemptions_total", {{"reason", reason}},
             n == preemptions_.end() ? 0 : n->second);
  }
  e.Family("gleaner_owner_return_seconds", "histogram",
           "From a GPU's claim (the checkpoint signal) to the job's processes gone.");
  e.HistogramSamples("gleaner_owner_return_seconds", {}, owner_return_.Read());
  e.Family("gleaner_holder_parking_total", "counter",
           "Parking held-idle GPUs' holders, by event: notice, refused, parked, park_failed, "
           "restored, restore_failed, exited, given_up.");
  for (const char* event : {"notice", "refused", "parked", "park_failed", "restored",
                            "restore_failed", "exited", "given_up"}) {
    const auto n = parking_.find(event);
    e.Sample("gleaner_holder_parking_total", {{"event", event}},
             n == parking_.end() ? 0 : n->second);
  }
  e.Family("gleaner_holder_restore_wait_seconds", "histogram",
           "From a parked holder's wake (or the ask) to its GPU memory restored.");
  e.HistogramSamples("gleaner_holder_restore_wait_seconds", {}, holder_wait_.Read());

  metrics::BuildInfo(e, daemon_, cluster::kProtocolVersion);

  if (dcgm) {
    // dcgm-exporter's names, units and labels (DCGM field identifiers).
    const auto dcgm_reading = [&](const char* name, const char* help, auto value_of) {
      e.Family(name, "gauge", help);
      for (const Gpu& g : gpus) {
        const std::optional<double> v = value_of(*g.snapshot);
        if (!v) continue;
        e.Sample(name,
                 {{"gpu", g.labels[0].second},
                  {"UUID", g.labels[1].second},
                  {"modelName", g.labels[2].second},
                  {"Hostname", hostname_}},
                 *v);
      }
    };
    dcgm_reading("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).",
                 [](const gpu::GpuSnapshot& s) -> std::optional<double> {
                   if (!s.utilization_gpu_pct.has_value()) return std::nullopt;
                   return s.utilization_gpu_pct.value();
                 });
    dcgm_reading("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).",
                 [](const gpu::GpuSnapshot& s) -> std::optional<double> {
                   if (!s.memory_used.has_value()) return std::nullopt;
                   return static_cast<double>(s.memory_used.value().count() >> 20);
                 });
    dcgm_reading("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).",
                 [](const gpu::GpuSnapshot& s) -> std::optional<double> {
                   if (!s.memory_used.has_value() || !s.memory_total.has_value()) {
                     return std::nullopt;
                   }
                   return static_cast<double>(
                       (s.memory_total.value().count() - s.memory_used.value().count()) >> 20);
                 });
    dcgm_reading("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).",
                 [](const gpu::GpuSnapshot& s) -> std::optional<double> {
                   if (!s.power_draw_w.has_value()) return std::nullopt;
                   return s.power_draw_w.value();
                 });
    dcgm_reading("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).",
                 [](const gpu::GpuSnapshot& s) -> std::optional<double> {
                   if (!s.temperature_c.has_value()) return std::nullopt;
                   return static_cast<double>(s.temperature_c.value());
                 });
    dcgm_reading("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.",
                 count_of(&gpu::GpuErrors::last_xid));
    dcgm_reading("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.",
                 count_of(&gpu::GpuErrors::pcie_replays));
    dcgm_reading("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "Total number of single-bit volatile ECC errors.",
                 count_of(&gpu::GpuErrors::ecc_corrected_volatile));
    dcgm_reading("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.",
                 count_of(&gpu::GpuErrors::ecc_uncorrected_volatile));
    dcgm_reading("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
                 "Total number of single-bit persistent ECC errors.",
                 count_of(&gpu::GpuErrors::ecc_corrected_aggregate));
    dcgm_reading("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
                 "Total number of double-bit persistent ECC errors.",
                 count_of(&gpu::GpuErrors::ecc_uncorrected_aggregate));
    dcgm_reading("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
                 "Number of remapped rows for correctable errors.",
                 count_of(&gpu::GpuErrors::remapped_rows_corrected));
    dcgm_reading("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                 "Number of remapped rows for uncorrectable errors.",
                 count_of(&gpu::GpuErrors::remapped_rows_uncorrected));
    dcgm_reading("DCGM_FI_DEV_ROW_REMAP_FAILURE", "Whether remapping of rows has failed.",
                 count_of(&gpu::GpuErrors::remap_failed));
    dcgm_reading("DCGM_FI_DEV_RETIRED_PENDING",
                 "Whether a page retirement is pending (1) or not (0).",
                 count_of(&gpu::GpuErrors::retirement_pending));
    dcgm_reading("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock throttle reasons (bitmask).",
                 count_of(&gpu::GpuErrors::clock_event_reasons));
  }
  return e.text();
}

}  // namespace gleaner::agent
