// Reads a gleaner.gpus/v1 document back into the view it was written from,
// so that `gleaner gpus` shows a daemon's view exactly as it shows its own.

#include "core/civil_time.h"
#include "observe/verdict_json.h"
#include "views/gpus_json.h"

namespace gleaner::views {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// "2026-11-29T18:53:47.120Z" (core::Rfc3339's form).
std::optional<core::TimePoint> Time(const json& j, const char* key) {
  return core::ParseRfc3339(Str(j, key));
}

// Why `key` has no value: its "unavailable" reason; a key the document
// does not carry at all (a coordinator's view of an agent) as not supported.
gpu::Unreadable Why(const json& container, const char* key) {
  if (!container.contains(key)) return gpu::Unreadable::kNotSupported;
  const json why = container.value("unavailable", json::object());
  const std::string name = Str(why, key);
  for (gpu::Unreadable u : {gpu::Unreadable::kNotSupported, gpu::Unreadable::kNoPermission,
                            gpu::Unreadable::kGpuLost, gpu::Unreadable::kError}) {
    if (gpu::UnreadableName(u) == name) return u;
  }
  return gpu::Unreadable::kError;
}

// `key` of `container` as a reading: its value, or null with the reason
// its "unavailable" object gives.
template <typename T, typename Convert>
gpu::Reading<T> Read(const json& container, const char* key, Convert convert) {
  const json v = container.value(key, json());
  if (v.is_null()) return gpu::Reading<T>::Fail(Why(container, key));
  try {
    return gpu::Reading<T>::Of(convert(v));
  } catch (const json::exception&) {
    return gpu::Reading<T>::Fail(gpu::Unreadable::kError, "not a " + std::string(key));
  }
}

template <typename T>
gpu::Reading<T> Read(const json& container, const char* key) {
  return Read<T>(container, key, [](const json& v) { return v.get<T>(); });
}

gpu::Reading<core::Bytes> Bytes(const json& container, const char* key) {
  return Read<core::Bytes>(container, key,
                           [](const json& v) { return core::Bytes(v.get<uint64_t>()); });
}

ProcessView ProcessFromJson(const json& j) {
  ProcessView pv;
  gpu::GpuProcess& p = pv.process;
  p.pid = j.value("pid", uint32_t{0});
  const std::string type = Str(j, "type");
  p.compute = type != "graphics";
  p.graphics = type.find("graphics") != std::string::npos;
  p.used_memory = Bytes(j, "used_memory_bytes");
  if (!j.value("user", json()).is_null() || !j.value("command", json()).is_null()) {
    agent::ProcessInfo owner;
    owner.pid = p.pid;
    owner.user = Str(j, "user");
    if (j.contains("uid") && j["uid"].is_number_unsigned()) owner.uid = j["uid"].get<uint32_t>();
    owner.command = Str(j, "command");
    owner.container_id = Str(j, "container_id");
    owner.systemd_unit = Str(j, "systemd_unit");
    owner.slurm_job_id = Str(j, "slurm_job_id");
    owner.kubernetes_pod_uid = Str(j, "kubernetes_pod_uid");
    pv.owner = std::move(owner);
  }
  return pv;
}

gpu::GpuHealth Health(const std::string& name) {
  for (gpu::GpuHealth h :
       {gpu::GpuHealth::kOk, gpu::GpuHealth::kNoPermission, gpu::GpuHealth::kLost,
        gpu::GpuHealth::kError, gpu::GpuHealth::kFaulty}) {
    if (gpu::GpuHealthName(h) == name) return h;
  }
  return gpu::GpuHealth::kError;
}

GpuView GpuFromJson(const json& j) {
  GpuView gv;
  gpu::GpuSnapshot& s = gv.snapshot;
  s.index = j.value("index", uint32_t{0});
  s.uuid = core::GpuUuid(Str(j, "uuid"));
  s.health = Health(j.value("health", "ok"));
  s.health_detail = Str(j, "health_detail");
  s.name = Read<std::string>(j, "name");
  s.pci_bus_id = Read<std::string>(j, "pci_bus_id");
  s.memory_total = Bytes(j, "memory_total_bytes");
  s.memory_used = Bytes(j, "memory_used_bytes");
  s.utilization_gpu_pct = Read<uint32_t>(j, "utilization_gpu_pct");
  s.utilization_memory_pct = Read<uint32_t>(j, "utilization_memory_pct");
  s.temperature_c = Read<int32_t>(j, "temperature_c");
  s.power_draw_w = Read<double>(j, "power_draw_w");
  s.power_limit_w = Read<double>(j, "power_limit_w");
  s.sm_clock_mhz = Read<uint32_t>(j, "sm_clock_mhz");
  if (const json processes = j.value("processes", json()); processes.is_array()) {
    std::vector<gpu::GpuProcess> listed;
    for (const json& p : processes) {
      if (!p.is_object()) continue;
      gv.processes.push_back(ProcessFromJson(p));
      listed.push_back(gv.processes.back().process);
    }
    s.processes = gpu::Reading<std::vector<gpu::GpuProcess>>::Of(std::move(listed));
  } else {
    s.processes = gpu::Reading<std::vector<gpu::GpuProcess>>::Fail(Why(j, "processes"));
  }
  if (const json verdict = j.value("verdict", json()); verdict.is_object()) {
    if (auto v = observe::VerdictFromJson(verdict); v.ok()) gv.verdict = std::move(v).value();
  }
  return gv;
}

slurm::JobOnHost SlurmJobFromJson(const json& j) {
  slurm::JobOnHost on;
  slurm::SlurmJob& job = on.job;
  job.id = Str(j, "id");
  job.array_id = Str(j, "array_id");
  job.name = Str(j, "name");
  job.user = Str(j, "user");
  job.account = Str(j, "account");
  job.partition = Str(j, "partition");
  job.qos = Str(j, "qos");
  job.state = Str(j, "state");
  job.start_time = Time(j, "started_at");
  job.restart_count = j.value("restarts", 0);
  job.gpu_count = j.value("gpu_count", 0);
  for (const json& g : j.value("gpus", json::array())) {
    if (!g.is_object()) continue;
    slurm::AllocatedGpu a;
    a.index = g.value("index", uint32_t{0});
    a.uuid = core::GpuUuid(Str(g, "uuid"));
    a.processes = g.value("processes", 0);
    on.gpus.push_back(std::move(a));
  }
  return on;
}

}  // namespace

core::Result<HostView> HostViewFromJson(const json& doc) {
  if (!doc.is_object() || doc.value("schema", "") != "gleaner.gpus/v1") {
    return core::InvalidArgument("not a gleaner.gpus/v1 document");
  }
  try {
    HostView view;
    view.taken_at = Time(doc, "taken_at").value_or(core::TimePoint{});
    view.hostname = Str(doc, "host");
    view.driver.source = Str(doc, "source");
    const json driver = doc.value("driver", json::object());
    view.driver.driver_version = Read<std::string>(driver, "version");
    view.driver.nvml_version = Read<std::string>(driver, "nvml_version");
    view.driver.cuda_driver_version = Read<int32_t>(driver, "cuda_version");
    for (const json& g : doc.value("gpus", json::array())) {
      if (g.is_object()) view.gpus.push_back(GpuFromJson(g));
    }
    if (const json slurm = doc.value("slurm", json()); slurm.is_object()) {
      view.slurm = true;
      view.slurm_node = Str(slurm, "node");
      view.slurm_at = Time(slurm, "as_of");
      view.slurm_error = Str(slurm, "error");
      for (const json& j : slurm.value("jobs", json::array())) {
        if (j.is_object()) view.slurm_jobs.push_back(SlurmJobFromJson(j));
      }
    }
    return view;
  } catch (const json::exception& e) {
    return core::InvalidArgument(std::string("malformed gleaner.gpus/v1 document: ") + e.what());
  }
}

}  // namespace gleaner::views
