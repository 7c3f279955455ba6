#include "cli/gpus_json.h"

#include "observe/verdict_json.h"

namespace gleaner::cli {
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
  return j;
}

json GpuJson(const GpuView& gv) {
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
  j["verdict"] = gv.verdict ? observe::VerdictToJson(*gv.verdict) : json(nullptr);
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
  doc["taken_at"] = observe::Rfc3339(view.taken_at);
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
  for (const GpuView& gv : view.gpus) doc["gpus"].push_back(GpuJson(gv));
  doc["topology"] = json::array();
  for (const gpu::GpuLink& link : view.topology) doc["topology"].push_back(LinkJson(link));
  return doc;
}

}  // namespace gleaner::cli
