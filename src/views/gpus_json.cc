#include "views/gpus_json.h"

#include "core/civil_time.h"
#include "observe/verdict_json.h"

namespace gleaner::views {
namespace {

using nlohmann::json;

// Writes `reading` as `key`, or null plus the reason under "unavailable".
template <typename T, typename Convert>
void Put(json& gpu, const char* key, const gpu::Reading<T>& reading, Convert convert) {
  if (reading.has_value()) {
    gpu[key] = convert(reading.value());
  } else {
    gpu[key] = nullptr;
    gpu["unavailable"][key] = gpu::UnreadableName(reading.why());
  }
}

template <typename T>
void Put(json& gpu, const char* key, const gpu::Reading<T>& reading) {
  Put(gpu, key, reading, [](const T& v) { return v; });
}

json ProcessJson(const ProcessView& pv) {
  const gpu::GpuProcess& p = pv.process;
  json j;
  j["pid"] = p.pid;
  j["type"] = p.compute && p.graphics ? "compute+graphics" : p.graphics ? "graphics" : "compute";
  j["used_memory_bytes"] =
      p.used_memory.has_value() ? json(p.used_memory.value().count()) : json(nullptr);
  j["user"] = pv.owner ? json(pv.owner->user) : json(nullptr);
  j["uid"] = pv.owner && pv.owner->uid ? json(*pv.owner->uid) : json(nullptr);
  j["command"] = pv.owner ? json(pv.owner->command) : json(nullptr);
  // Where it runs, as its cgroup (or, for Slurm, its environment) says.
  const auto placed = [&](const std::string agent::ProcessInfo::*field) {
    return pv.owner && !((*pv.owner).*field).empty() ? json((*pv.owner).*field) : json(nullptr);
  };
  j["container_id"] = placed(&agent::ProcessInfo::container_id);
  j["systemd_unit"] = placed(&agent::ProcessInfo::systemd_unit);
  j["slurm_job_id"] = placed(&agent::ProcessInfo::slurm_job_id);
  j["kubernetes_pod_uid"] = placed(&agent::ProcessInfo::kubernetes_pod_uid);
  return j;
}

// The driver's error counters, each null with its reason where unreadable
// (consumer boards have no ECC, pre-Ampere GPUs no row remapping).
json ErrorsJson(const gpu::GpuErrors& e) {
  json j;
  j["unavailable"] = json::object();
  Put(j, "ecc_corrected_volatile", e.ecc_corrected_volatile);
  Put(j, "ecc_uncorrected_volatile", e.ecc_uncorrected_volatile);
  Put(j, "ecc_corrected_aggregate", e.ecc_corrected_aggregate);
  Put(j, "ecc_uncorrected_aggregate", e.ecc_uncorrected_aggregate);
  Put(j, "pcie_replays", e.pcie_replays);
  Put(j, "retirement_pending", e.retirement_pending);
  Put(j, "remapped_rows_corrected", e.remapped_rows_corrected);
  Put(j, "remapped_rows_uncorrected", e.remapped_rows_uncorrected);
  Put(j, "remap_pending", e.remap_pending);
  Put(j, "remap_failed", e.remap_failed);
  Put(j, "clock_event_reasons", e.clock_event_reasons);
  Put(j, "hardware_slowdown", e.clock_event_reasons,
      [](uint64_t r) { return (r & gpu::kHardwareSlowdownReasons) != 0; });
  Put(j, "last_xid", e.last_xid);
  Put(j, "xid_count", e.xid_count);
  Put(j, "fatal_xid", e.fatal_xid);
  return j;
}

json Text(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json GpuJson(const GpuView& gv, const HostView& view) {
  const gpu::GpuSnapshot& s = gv.snapshot;
  const auto bytes = [](core::Bytes b) { return b.count(); };
  json j;
  j["index"] = s.index;
  j["uuid"] = s.uuid.empty() ? json(nullptr) : json(s.uuid.str());
  j["health"] = gpu::GpuHealthName(s.health);
  j["health_detail"] = s.health_detail.empty() ? json(nullptr) : json(s.health_detail);
  j["unavailable"] = json::object();
  Put(j, "name", s.name);
  Put(j, "pci_bus_id", s.pci_bus_id);
  Put(j, "memory_total_bytes", s.memory_total, bytes);
  Put(j, "memory_used_bytes", s.memory_used, bytes);
  Put(j, "utilization_gpu_pct", s.utilization_gpu_pct);
  Put(j, "utilization_memory_pct", s.utilization_memory_pct);
  Put(j, "temperature_c", s.temperature_c);
  Put(j, "power_draw_w", s.power_draw_w);
  Put(j, "power_limit_w", s.power_limit_w);
  Put(j, "sm_clock_mhz", s.sm_clock_mhz);
  if (s.processes.has_value()) {
    j["processes"] = json::array();
    for (const ProcessView& pv : gv.processes) j["processes"].push_back(ProcessJson(pv));
  } else {
    j["processes"] = nullptr;
    j["unavailable"]["processes"] = gpu::UnreadableName(s.processes.why());
  }
  j["errors"] = ErrorsJson(s.errors);
  j["verdict"] = gv.verdict ? observe::VerdictToJson(*gv.verdict) : json(nullptr);
  if (view.slurm) {
    const slurm::JobOnHost* holder = slurm::HolderOf(view.slurm_jobs, s.index);
    j["slurm_job"] = holder ? SlurmJobJson(holder->job) : json(nullptr);
  }
  return j;
}

json LinkJson(const gpu::GpuLink& link) {
  json j;
  j["a"] = link.a.str();
  j["b"] = link.b.str();
  j["unavailable"] = json::object();
  Put(j, "pcie", link.pcie, [](gpu::PcieLevel l) { return gpu::PcieLevelName(l); });
  Put(j, "nvlink", link.nvlink);
  return j;
}

json OptionalString(const gpu::Reading<std::string>& r) {
  return r.has_value() ? json(r.value()) : json(nullptr);
}

}  // namespace

json GpusToJson(const HostView& view) {
  json doc;
  doc["schema"] = "gleaner.gpus/v1";
  doc["taken_at"] = core::Rfc3339(view.taken_at);
  doc["host"] = view.hostname;
  doc["source"] = view.driver.source;
  doc["driver"] = {
      {"version", OptionalString(view.driver.driver_version)},
      {"nvml_version", OptionalString(view.driver.nvml_version)},
      {"cuda_version", view.driver.cuda_driver_version.has_value()
                           ? json(view.driver.cuda_driver_version.value())
                           : json(nullptr)},
  };
  doc["gpus"] = json::array();
  for (const GpuView& gv : view.gpus) doc["gpus"].push_back(GpuJson(gv, view));
  doc["topology"] = json::array();
  for (const gpu::GpuLink& link : view.topology) doc["topology"].push_back(LinkJson(link));
  if (view.slurm) {
    json slurm = {{"node", view.slurm_node},
                  {"as_of", view.slurm_at ? json(core::Rfc3339(*view.slurm_at)) : json(nullptr)},
                  {"error", Text(view.slurm_error)},
                  {"jobs", json::array()}};
    for (const slurm::JobOnHost& j : view.slurm_jobs) {
      slurm["jobs"].push_back(JobOnHostJson(j, view.taken_at));
    }
    doc["slurm"] = std::move(slurm);
  }
  return doc;
}

json SlurmJobJson(const slurm::SlurmJob& job) {
  return {{"id", job.id},
          {"array_id", Text(job.array_id)},
          {"name", Text(job.name)},
          {"user", Text(job.user)},
          {"uid", job.uid ? json(*job.uid) : json(nullptr)},
          {"account", Text(job.account)},
          {"partition", Text(job.partition)},
          {"qos", Text(job.qos)},
          {"state", Text(job.state)},
          {"started_at", job.start_time ? json(core::Rfc3339(*job.start_time)) : json(nullptr)},
          {"restarts", job.restart_count},
          {"gpu_count", job.gpu_count}};
}

json JobOnHostJson(const slurm::JobOnHost& job, core::TimePoint now) {
  json j = SlurmJobJson(job.job);
  j["gpus"] = json::array();
  for (const slurm::AllocatedGpu& g : job.gpus) {
    j["gpus"].push_back(
        {{"index", g.index},
         {"uuid", Text(g.uuid.str())},
         {"state", g.verdict ? json(observe::GpuStateName(g.verdict->state)) : json(nullptr)},
         {"since", g.verdict ? json(core::Rfc3339(g.verdict->since)) : json(nullptr)},
         {"reason", g.verdict ? Text(g.verdict->evidence.reason) : json(nullptr)},
         {"processes", g.processes}});
  }
  j["unused_gpus"] = job.UnusedGpus(now);
  const auto unused_for = job.UnusedFor(now);
  j["unused_for_s"] = unused_for ? json(core::ToSecondsDouble(*unused_for)) : json(nullptr);
  return j;
}

}  // namespace gleaner::views
