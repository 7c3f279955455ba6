#include "gpu/scenario.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/enum_names.h"
#include "core/json_depth.h"
#include "gpu/builtin_scenarios.h"
#include "gpu/json_lines.h"

namespace gleaner::gpu {
namespace {

using json = nlohmann::json;
using core::Bytes;
using core::Result;
using core::Status;

const std::map<std::string, ScenarioField>& FieldNames() {
  static const std::map<std::string, ScenarioField> kNames = {
      {"name", ScenarioField::kName},
      {"pci_bus_id", ScenarioField::kPciBusId},
      {"memory", ScenarioField::kMemory},
      {"utilization", ScenarioField::kUtilization},
      {"temperature", ScenarioField::kTemperature},
      {"power", ScenarioField::kPower},
      {"power_limit", ScenarioField::kPowerLimit},
      {"sm_clock", ScenarioField::kSmClock},
      {"processes", ScenarioField::kProcesses},
      {"ecc", ScenarioField::kEcc},
      {"pcie_replays", ScenarioField::kPcieReplays},
      {"retired_pages", ScenarioField::kRetiredPages},
      {"remapped_rows", ScenarioField::kRemappedRows},
      {"clock_events", ScenarioField::kClockEvents},
      {"xid_events", ScenarioField::kXidEvents},
  };
  return kNames;
}

// Errors a field can fail with.
const std::map<std::string, ScenarioError>& FaultErrorNames() {
  static const std::map<std::string, ScenarioError> kNames = {
      {"NOT_SUPPORTED", ScenarioError::kNotSupported},
      {"NO_PERMISSION", ScenarioError::kNoPermission},
      {"GPU_IS_LOST", ScenarioError::kGpuLost},
      {"UNKNOWN", ScenarioError::kUnknown},
  };
  return kNames;
}

// Errors nvmlInit can fail with.
const std::map<std::string, ScenarioError>& InitErrorNames() {
  static const std::map<std::string, ScenarioError> kNames = {
      {"DRIVER_NOT_LOADED", ScenarioError::kDriverNotLoaded},
      {"LIB_RM_VERSION_MISMATCH", ScenarioError::kLibRmVersionMismatch},
      {"NO_PERMISSION", ScenarioError::kNoPermission},
      {"UNKNOWN", ScenarioError::kUnknown},
  };
  return kNames;
}

// NVML's buffers hold this many characters (plus the terminating NUL).
constexpr size_t kMaxUuidChars = 95;
constexpr size_t kMaxNameChars = 95;
constexpr size_t kMaxVersionChars = 79;
constexpr size_t kMaxGpus = 64;

template <typename Map>
std::string KeysOf(const Map& map) {
  std::string out;
  for (const auto& [key, unused] : map) out += (out.empty() ? "" : ", ") + key;
  return out;
}

// Reads a parsed scenario document, turning every mistake into an error that
// names the source, the line and the path ("gpus[2].timeline[0].x").
class Reader {
 public:
  Reader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  Status Error(const std::string& pointer, const std::string& what) const {
    // Indexing lines costs a pass over the text: only on the error path.
    const int line = JsonLineIndex(text_).LineOf(pointer);
    return core::InvalidArgument(source_ + ":" + std::to_string(line) + ": " +
                                 DisplayPath(pointer) + ": " + what);
  }

  // Rejects keys outside `allowed`: a misspelt key must not be silently ignored.
  Status CheckKeys(const json& object, const std::string& pointer,
                   std::initializer_list<const char*> allowed) const {
    if (!object.is_object()) return Error(pointer, "expected an object, got " + Kind(object));
    for (const auto& item : object.items()) {
      // Not a structured binding: clang before 16 cannot capture one in a lambda.
      const std::string& key = item.key();
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
        std::string list;
        for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return Error(pointer + "/" + key, "unknown key; expected one of: " + list);
      }
    }
    return Status::Ok();
  }

  Result<double> Number(const json& object, const std::string& pointer, const char* key, double min,
                        double max, std::optional<double> fallback) const {
    const std::string at = pointer + "/" + key;
    if (!object.contains(key)) {
      if (fallback) return *fallback;
      return Error(at, "missing; expected a number from " + Fmt(min) + " to " + Fmt(max));
    }
    const json& v = object.at(key);
    if (!v.is_number()) return Error(at, "expected a number, got " + Kind(v));
    double d = v.get<double>();
    if (!(d >= min && d <= max)) {
      return Error(at,
                   "expected a number from " + Fmt(min) + " to " + Fmt(max) + ", got " + Fmt(d));
    }
    return d;
  }

  Result<uint32_t> Unsigned(const json& object, const std::string& pointer, const char* key,
                            double max, std::optional<uint32_t> fallback) const {
    const std::string at = pointer + "/" + key;
    if (object.contains(key) && !object.at(key).is_number_integer()) {
      return Error(at, "expected a whole number, got " + Kind(object.at(key)));
    }
    GLEANER_ASSIGN_OR_RETURN(double d, Number(object, pointer, key, 0, max, fallback));
    return static_cast<uint32_t>(d);
  }

  Result<std::string> String(const json& object, const std::string& pointer, const char* key,
                             std::optional<std::string> fallback, size_t max_chars = 4096) const {
    const std::string at = pointer + "/" + key;
    if (!object.contains(key)) {
      if (fallback) return *fallback;
      return Error(at, "missing; expected a string");
    }
    const json& v = object.at(key);
    if (!v.is_string()) return Error(at, "expected a string, got " + Kind(v));
    if (v.get_ref<const std::string&>().size() > max_chars) {
      return Error(at, "too long: at most " + std::to_string(max_chars) + " characters");
    }
    return v.get<std::string>();
  }

  Result<bool> Bool(const json& object, const std::string& pointer, const char* key,
                    bool fallback) const {
    if (!object.contains(key)) return fallback;
    const json& v = object.at(key);
    if (!v.is_boolean())
      return Error(pointer + "/" + key, "expected true or false, got " + Kind(v));
    return v.get<bool>();
  }

  template <typename Map>
  Result<typename Map::mapped_type> Enum(const json& v, const std::string& pointer,
                                         const Map& names) const {
    if (!v.is_string()) return Error(pointer, "expected one of: " + KeysOf(names));
    auto it = names.find(v.get<std::string>());
    if (it == names.end()) {
      return Error(pointer, "unknown value \"" + v.get<std::string>() +
                                "\"; expected one of: " + KeysOf(names));
    }
    return it->second;
  }

  Result<std::set<ScenarioField>> Fields(const json& v, const std::string& pointer) const {
    if (!v.is_array()) return Error(pointer, "expected a list of fields: " + KeysOf(FieldNames()));
    std::set<ScenarioField> out;
    for (size_t i = 0; i < v.size(); ++i) {
      GLEANER_ASSIGN_OR_RETURN(ScenarioField f,
                               Enum(v[i], pointer + "/" + std::to_string(i), FieldNames()));
      out.insert(f);
    }
    return out;
  }

  Result<std::vector<std::vector<uint32_t>>> Groups(const json& v, const std::string& pointer,
                                                    size_t gpu_count) const {
    std::vector<std::vector<uint32_t>> out;
    if (!v.is_array()) {
      return Error(pointer, "expected a list of GPU index lists, like [[0,1],[2,3]]");
    }
    if (gpu_count == 0 && !v.empty()) return Error(pointer, "refers to GPUs, but there are none");
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = pointer + "/" + std::to_string(i);
      if (!v[i].is_array()) return Error(at, "expected a list of GPU indices, like [0,1]");
      std::vector<uint32_t> group;
      for (size_t j = 0; j < v[i].size(); ++j) {
        const json& x = v[i][j];
        if (!x.is_number_unsigned() || x.get<uint64_t>() >= gpu_count) {
          return Error(at + "/" + std::to_string(j),
                       "expected a GPU index from 0 to " + std::to_string(gpu_count - 1));
        }
        group.push_back(x.get<uint32_t>());
      }
      out.push_back(std::move(group));
    }
    return out;
  }

 private:
  static std::string Fmt(double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", d);
    return buf;
  }
  static std::string Kind(const json& v) {
    if (v.is_string()) return "\"" + v.get<std::string>() + "\"";
    if (v.is_number()) return Fmt(v.get<double>());
    return v.type_name();
  }
  static std::string DisplayPath(const std::string& pointer) {
    std::string out;
    size_t pos = 1;
    while (pos <= pointer.size() && !pointer.empty()) {
      size_t next = pointer.find('/', pos);
      std::string part = pointer.substr(pos, next == std::string::npos ? next : next - pos);
      if (!part.empty() && std::all_of(part.begin(), part.end(),
                                       [](unsigned char c) { return std::isdigit(c) != 0; })) {
        out += "[" + part + "]";
      } else {
        out += (out.empty() ? "" : ".") + part;
      }
      if (next == std::string::npos) break;
      pos = next + 1;
    }
    return out.empty() ? "(document)" : out;
  }

  std::string_view text_;
  std::string source_;
};

}  // namespace

uint32_t ProcessUtilization(const ScenarioProcess& process, const ScenarioFrame& frame) {
  return process.sm_util_pct.value_or(frame.utilization_gpu_pct);
}

namespace {

Result<ScenarioProcess> ReadProcess(const Reader& r, const json& v, const std::string& at,
                                    Bytes gpu_memory) {
  GLEANER_RETURN_IF_ERROR(
      r.CheckKeys(v, at, {"pid", "used_memory_mib", "sm_util_pct", "type", "user", "command"}));
  ScenarioProcess p;
  GLEANER_ASSIGN_OR_RETURN(p.pid, r.Unsigned(v, at, "pid", 4194304, std::nullopt));
  if (p.pid == 0) return r.Error(at + "/pid", "expected a process id from 1 to 4194304, got 0");
  GLEANER_ASSIGN_OR_RETURN(uint32_t mib,
                           r.Unsigned(v, at, "used_memory_mib", gpu_memory.ToMiB(), 0u));
  p.used_memory = Bytes::MiB(mib);
  if (v.contains("sm_util_pct")) {
    GLEANER_ASSIGN_OR_RETURN(p.sm_util_pct, r.Unsigned(v, at, "sm_util_pct", 100, std::nullopt));
  }
  GLEANER_ASSIGN_OR_RETURN(std::string type, r.String(v, at, "type", "compute"));
  if (type != "compute" && type != "graphics" && type != "compute+graphics") {
    return r.Error(at + "/type", "expected \"compute\", \"graphics\" or \"compute+graphics\"");
  }
  p.compute = type != "graphics";
  p.graphics = type != "compute";
  GLEANER_ASSIGN_OR_RETURN(p.user, r.String(v, at, "user", ""));
  GLEANER_ASSIGN_OR_RETURN(p.command, r.String(v, at, "command", ""));
  return p;
}

// Reads a frame's "errors"; counters it omits keep the values of `previous`.
Result<ScenarioErrors> ReadErrors(const Reader& r, const json& v, const std::string& at,
                                  ScenarioErrors e) {
  GLEANER_RETURN_IF_ERROR(r.CheckKeys(
      v, at,
      {"ecc_corrected_volatile", "ecc_uncorrected_volatile", "ecc_corrected_aggregate",
       "ecc_uncorrected_aggregate", "pcie_replays", "retirement_pending", "remapped_rows_corrected",
       "remapped_rows_uncorrected", "remap_pending", "remap_failed", "clock_event_reasons"}));
  constexpr double kMax = 4294967295.0;
  for (auto [key, field] : {std::pair{"ecc_corrected_volatile", &e.ecc_corrected_volatile},
                            std::pair{"ecc_uncorrected_volatile", &e.ecc_uncorrected_volatile},
                            std::pair{"ecc_corrected_aggregate", &e.ecc_corrected_aggregate},
                            std::pair{"ecc_uncorrected_aggregate", &e.ecc_uncorrected_aggregate},
                            std::pair{"clock_event_reasons", &e.clock_event_reasons}}) {
    GLEANER_ASSIGN_OR_RETURN(*field, r.Unsigned(v, at, key, kMax, static_cast<uint32_t>(*field)));
  }
  for (auto [key, field] : {std::pair{"pcie_replays", &e.pcie_replays},
                            std::pair{"remapped_rows_corrected", &e.remapped_rows_corrected},
                            std::pair{"remapped_rows_uncorrected", &e.remapped_rows_uncorrected}}) {
    GLEANER_ASSIGN_OR_RETURN(*field, r.Unsigned(v, at, key, kMax, *field));
  }
  for (auto [key, field] :
       {std::pair{"retirement_pending", &e.retirement_pending},
        std::pair{"remap_pending", &e.remap_pending}, std::pair{"remap_failed", &e.remap_failed}}) {
    GLEANER_ASSIGN_OR_RETURN(*field, r.Bool(v, at, key, *field));
  }
  return e;
}

// Reads one frame; fields it omits keep the values of `previous`.
Result<ScenarioFrame> ReadFrame(const Reader& r, const json& v, const std::string& at,
                                const ScenarioFrame& previous, const ScenarioGpu& gpu) {
  GLEANER_RETURN_IF_ERROR(
      r.CheckKeys(v, at,
                  {"at_s", "utilization_gpu_pct", "utilization_memory_pct", "memory_used_mib",
                   "temperature_c", "power_draw_w", "sm_clock_mhz", "processes", "errors", "xid"}));
  ScenarioFrame f = previous;
  // An event, not a state: only where a frame says so.
  GLEANER_ASSIGN_OR_RETURN(f.xid, r.Unsigned(v, at, "xid", 65535, 0));
  if (v.contains("errors")) {
    GLEANER_ASSIGN_OR_RETURN(f.errors, ReadErrors(r, v.at("errors"), at + "/errors", f.errors));
  }
  GLEANER_ASSIGN_OR_RETURN(f.at_s, r.Number(v, at, "at_s", 0, 1e9, std::nullopt));
  GLEANER_ASSIGN_OR_RETURN(f.utilization_gpu_pct,
                           r.Unsigned(v, at, "utilization_gpu_pct", 100, f.utilization_gpu_pct));
  GLEANER_ASSIGN_OR_RETURN(f.utilization_memory_pct, r.Unsigned(v, at, "utilization_memory_pct",
                                                                100, f.utilization_memory_pct));
  const double total_mib = gpu.memory_total.ToMiB();
  GLEANER_ASSIGN_OR_RETURN(double used_mib,
                           r.Number(v, at, "memory_used_mib", 0, total_mib, f.memory_used.ToMiB()));
  f.memory_used = Bytes(static_cast<uint64_t>(used_mib * (1 << 20)));
  GLEANER_ASSIGN_OR_RETURN(double temp,
                           r.Number(v, at, "temperature_c", -40, 150, f.temperature_c));
  f.temperature_c = static_cast<int32_t>(temp);
  GLEANER_ASSIGN_OR_RETURN(f.power_draw_w,
                           r.Number(v, at, "power_draw_w", 0, 5000, f.power_draw_w));
  GLEANER_ASSIGN_OR_RETURN(f.sm_clock_mhz,
                           r.Unsigned(v, at, "sm_clock_mhz", 10000, f.sm_clock_mhz));
  if (v.contains("processes")) {
    const json& list = v.at("processes");
    if (!list.is_array()) return r.Error(at + "/processes", "expected a list of processes");
    f.processes.clear();
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string p_at = at + "/processes/" + std::to_string(i);
      GLEANER_ASSIGN_OR_RETURN(ScenarioProcess p, ReadProcess(r, list[i], p_at, gpu.memory_total));
      for (const ScenarioProcess& other : f.processes) {
        if (other.pid == p.pid) {
          return r.Error(p_at + "/pid", "pid " + std::to_string(p.pid) +
                                            " appears twice; use \"type\": \"compute+graphics\" "
                                            "for a process with both contexts");
        }
      }
      f.processes.push_back(std::move(p));
    }
  }
  return f;
}

Result<ScenarioFault> ReadFault(const Reader& r, const json& v, const std::string& at) {
  GLEANER_RETURN_IF_ERROR(r.CheckKeys(v, at, {"fields", "error", "from_s", "to_s"}));
  ScenarioFault fault;
  if (!v.contains("fields")) return r.Error(at + "/fields", "missing; expected a list of fields");
  GLEANER_ASSIGN_OR_RETURN(fault.fields, r.Fields(v.at("fields"), at + "/fields"));
  if (!v.contains("error")) return r.Error(at + "/error", "missing; expected an NVML error name");
  GLEANER_ASSIGN_OR_RETURN(fault.error, r.Enum(v.at("error"), at + "/error", FaultErrorNames()));
  GLEANER_ASSIGN_OR_RETURN(fault.from_s, r.Number(v, at, "from_s", 0, 1e9, 0.0));
  GLEANER_ASSIGN_OR_RETURN(fault.to_s, r.Number(v, at, "to_s", fault.from_s, 1e300, 1e300));
  return fault;
}

Result<ScenarioGpu> ReadGpu(const Reader& r, const json& v, const std::string& at, size_t index) {
  GLEANER_RETURN_IF_ERROR(
      r.CheckKeys(v, at,
                  {"uuid", "name", "pci_bus_id", "memory_total_mib", "power_limit_w", "access",
                   "lost_at_s", "unsupported", "faults", "timeline"}));
  ScenarioGpu gpu;
  char default_uuid[64];
  std::snprintf(default_uuid, sizeof default_uuid, "GPU-00000000-0000-4000-8000-%012zx", index);
  char default_bus[32];
  std::snprintf(default_bus, sizeof default_bus, "0000:%02zx:00.0", 0x18 + index);
  GLEANER_ASSIGN_OR_RETURN(gpu.uuid, r.String(v, at, "uuid", default_uuid, kMaxUuidChars));
  if (gpu.uuid.rfind("GPU-", 0) != 0) {
    return r.Error(at + "/uuid",
                   "expected a UUID starting with \"GPU-\", got \"" + gpu.uuid + "\"");
  }
  GLEANER_ASSIGN_OR_RETURN(gpu.name, r.String(v, at, "name", std::nullopt, kMaxNameChars));
  GLEANER_ASSIGN_OR_RETURN(gpu.pci_bus_id, r.String(v, at, "pci_bus_id", default_bus));
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  char rest = 0;
  const int fields =
      std::sscanf(gpu.pci_bus_id.c_str(), "%4x:%2x:%2x.%1x%c", &domain, &bus, &dev, &fn, &rest);
  if (fields != 4 || dev > 0x1f || fn != 0) {
    return r.Error(
        at + "/pci_bus_id",
        "expected a GPU's sysfs address like \"0000:18:00.0\", got \"" + gpu.pci_bus_id + "\"");
  }
  char normalised[32];  // lower case, as sysfs and the NVML backend write it
  std::snprintf(normalised, sizeof normalised, "%04x:%02x:%02x.0", domain, bus, dev);
  gpu.pci_bus_id = normalised;
  GLEANER_ASSIGN_OR_RETURN(uint32_t total_mib,
                           r.Unsigned(v, at, "memory_total_mib", 1 << 24, std::nullopt));
  gpu.memory_total = Bytes::MiB(total_mib);
  GLEANER_ASSIGN_OR_RETURN(gpu.power_limit_w, r.Number(v, at, "power_limit_w", 1, 5000, 300.0));
  GLEANER_ASSIGN_OR_RETURN(std::string access, r.String(v, at, "access", "ok"));
  if (access != "ok" && access != "no_permission") {
    return r.Error(at + "/access", "expected \"ok\" or \"no_permission\", got \"" + access + "\"");
  }
  gpu.no_permission = access == "no_permission";
  if (v.contains("lost_at_s")) {
    GLEANER_ASSIGN_OR_RETURN(gpu.lost_at_s, r.Number(v, at, "lost_at_s", 0, 1e9, std::nullopt));
  }
  if (v.contains("unsupported")) {
    GLEANER_ASSIGN_OR_RETURN(gpu.unsupported, r.Fields(v.at("unsupported"), at + "/unsupported"));
  }
  if (v.contains("faults")) {
    const json& list = v.at("faults");
    if (!list.is_array()) return r.Error(at + "/faults", "expected a list of faults");
    for (size_t i = 0; i < list.size(); ++i) {
      GLEANER_ASSIGN_OR_RETURN(ScenarioFault f,
                               ReadFault(r, list[i], at + "/faults/" + std::to_string(i)));
      gpu.faults.push_back(std::move(f));
    }
  }
  const json empty_timeline = json::array({json{{"at_s", 0}}});
  const json& timeline = v.contains("timeline") ? v.at("timeline") : empty_timeline;
  if (!timeline.is_array() || timeline.empty()) {
    return r.Error(at + "/timeline",
                   "expected a non-empty list of frames, the first at \"at_s\": 0");
  }
  ScenarioFrame previous;
  for (size_t i = 0; i < timeline.size(); ++i) {
    const std::string frame_at = at + "/timeline/" + std::to_string(i);
    GLEANER_ASSIGN_OR_RETURN(ScenarioFrame f, ReadFrame(r, timeline[i], frame_at, previous, gpu));
    if (i == 0 && f.at_s != 0) return r.Error(frame_at + "/at_s", "the first frame must be at 0");
    if (i > 0 && f.at_s <= previous.at_s) {
      return r.Error(frame_at + "/at_s", "frames must be in increasing at_s order");
    }
    gpu.timeline.push_back(f);
    previous = std::move(f);
  }
  return gpu;
}

Result<Scenario> ReadScenario(const Reader& r, const json& doc) {
  GLEANER_RETURN_IF_ERROR(r.CheckKeys(doc, "", {"name", "driver", "gpus", "topology", "period_s"}));
  Scenario s;
  GLEANER_ASSIGN_OR_RETURN(s.name, r.String(doc, "", "name", "unnamed"));
  if (doc.contains("period_s")) {
    GLEANER_ASSIGN_OR_RETURN(s.period_s, r.Number(doc, "", "period_s", 1e-3, 1e9, std::nullopt));
  }
  if (doc.contains("driver")) {
    const json& d = doc.at("driver");
    GLEANER_RETURN_IF_ERROR(
        r.CheckKeys(d, "/driver", {"version", "nvml_version", "cuda_version", "init_error"}));
    GLEANER_ASSIGN_OR_RETURN(s.driver.version,
                             r.String(d, "/driver", "version", s.driver.version, kMaxVersionChars));
    GLEANER_ASSIGN_OR_RETURN(
        s.driver.nvml_version,
        r.String(d, "/driver", "nvml_version", s.driver.nvml_version, kMaxVersionChars));
    GLEANER_ASSIGN_OR_RETURN(uint32_t cuda,
                             r.Unsigned(d, "/driver", "cuda_version", 99999,
                                        static_cast<uint32_t>(s.driver.cuda_version)));
    s.driver.cuda_version = static_cast<int32_t>(cuda);
    if (d.contains("init_error")) {
      GLEANER_ASSIGN_OR_RETURN(s.driver.init_error,
                               r.Enum(d.at("init_error"), "/driver/init_error", InitErrorNames()));
    }
  }
  if (!doc.contains("gpus")) return r.Error("/gpus", "missing; expected a list of GPUs");
  const json& gpus = doc.at("gpus");
  if (!gpus.is_array()) {
    return r.Error("/gpus", std::string("expected a list of GPUs, got ") + gpus.type_name());
  }
  if (gpus.size() > kMaxGpus) {
    return r.Error("/gpus", "at most " + std::to_string(kMaxGpus) + " GPUs per scenario");
  }
  for (size_t i = 0; i < gpus.size(); ++i) {
    GLEANER_ASSIGN_OR_RETURN(ScenarioGpu g, ReadGpu(r, gpus[i], "/gpus/" + std::to_string(i), i));
    for (const ScenarioGpu& other : s.gpus) {
      if (other.uuid == g.uuid) {
        return r.Error("/gpus/" + std::to_string(i) + "/uuid", "duplicate UUID " + g.uuid);
      }
    }
    s.gpus.push_back(std::move(g));
  }
  if (doc.contains("topology")) {
    const json& t = doc.at("topology");
    GLEANER_RETURN_IF_ERROR(
        r.CheckKeys(t, "/topology", {"nvlink", "pcie_switch", "host_bridge", "numa_node"}));
    const std::pair<const char*, std::vector<std::vector<uint32_t>>*> groups[] = {
        {"nvlink", &s.topology.nvlink},
        {"pcie_switch", &s.topology.pcie_switch},
        {"host_bridge", &s.topology.host_bridge},
        {"numa_node", &s.topology.numa_node}};
    for (const auto& [key, target] : groups) {
      if (!t.contains(key)) continue;
      GLEANER_ASSIGN_OR_RETURN(*target,
                               r.Groups(t.at(key), std::string("/topology/") + key, s.gpus.size()));
    }
  }
  return s;
}

bool InSameGroup(const std::vector<std::vector<uint32_t>>& groups, uint32_t a, uint32_t b) {
  return std::any_of(groups.begin(), groups.end(), [&](const std::vector<uint32_t>& g) {
    return std::find(g.begin(), g.end(), a) != g.end() &&
           std::find(g.begin(), g.end(), b) != g.end();
  });
}

}  // namespace

std::optional<ScenarioError> ScenarioGpuState::ErrorFor(ScenarioField field) const {
  if (lost()) return ScenarioError::kGpuLost;
  if (gpu_->unsupported.contains(field)) return ScenarioError::kNotSupported;
  for (const ScenarioFault& f : gpu_->faults) {
    if (f.fields.contains(field) && t_s_ >= f.from_s && t_s_ < f.to_s) return f.error;
  }
  return std::nullopt;
}

ScenarioGpuState::Xids ScenarioGpuState::XidsSoFar() const {
  Xids xids;
  for (const ScenarioFrame* f = gpu_->timeline.data(); f <= frame_; ++f) {
    if (f->xid == 0) continue;
    xids.last = f->xid;
    ++xids.count;
    if (!IsApplicationXid(f->xid)) xids.fatal = f->xid;
  }
  return xids;
}

ScenarioGpuState GpuStateAt(const Scenario& scenario, size_t index, double t_s) {
  const ScenarioGpu& gpu = scenario.gpus.at(index);
  double in_period = t_s;
  if (scenario.period_s) {
    in_period = std::fmod(t_s, *scenario.period_s);
    if (in_period < 0) in_period += *scenario.period_s;  // the past repeats too
  }
  // The last frame that has started: frames are sorted and the first is at 0.
  auto it = std::upper_bound(gpu.timeline.begin(), gpu.timeline.end(), in_period,
                             [](double t, const ScenarioFrame& f) { return t < f.at_s; });
  const ScenarioFrame& frame = it == gpu.timeline.begin() ? gpu.timeline.front() : *(it - 1);
  return ScenarioGpuState(gpu, frame, t_s);
}

PcieLevel PcieLevelBetween(const Scenario& scenario, uint32_t a, uint32_t b) {
  const ScenarioTopology& t = scenario.topology;
  if (InSameGroup(t.pcie_switch, a, b)) return PcieLevel::kSinglePcieSwitch;
  if (InSameGroup(t.host_bridge, a, b)) return PcieLevel::kHostBridge;
  if (InSameGroup(t.numa_node, a, b)) return PcieLevel::kSameNumaNode;
  return PcieLevel::kCrossSocket;
}

bool NvlinkBetween(const Scenario& scenario, uint32_t a, uint32_t b) {
  return InSameGroup(scenario.topology.nvlink, a, b);
}

Result<Scenario> ParseScenario(std::string_view text, std::string_view source) {
  if (core::NestsDeeperThan(text)) {
    return core::InvalidArgument(std::string(source) + ": nested deeper than " +
                                 std::to_string(core::kMaxJsonDepth) +
                                 " levels; a scenario needs a few");
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    const size_t end = std::min(e.byte, text.size());
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(end), '\n');
    std::string what = e.what();
    if (auto pos = what.find("syntax error"); pos != std::string::npos) what = what.substr(pos);
    return core::InvalidArgument(std::string(source) + ":" + std::to_string(line) +
                                 ": not valid JSON: " + what);
  } catch (const json::exception& e) {  // out_of_range for numbers like 1e400
    return core::InvalidArgument(std::string(source) + ": not usable JSON: " + e.what());
  }
  Reader reader(text, source);
  try {
    return ReadScenario(reader, doc);
  } catch (const json::exception& e) {
    return core::InvalidArgument(std::string(source) + ": " + e.what());
  }
}

Result<Scenario> LoadScenario(std::string_view name_or_path) {
  if (auto builtin = BuiltinScenarioText(name_or_path))
    return ParseScenario(*builtin, name_or_path);
  if (std::filesystem::is_directory(std::string(name_or_path))) {
    return core::InvalidArgument(std::string(name_or_path) +
                                 " is a directory; expected a scenario file or a built-in name");
  }
  std::ifstream in{std::string(name_or_path)};
  if (!in) {
    std::string names;
    for (const auto& n : BuiltinScenarioNames()) names += (names.empty() ? "" : ", ") + n;
    return core::NotFound("no scenario file \"" + std::string(name_or_path) +
                          "\" and no built-in scenario of that name (built-in: " + names + ")");
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseScenario(text.str(), name_or_path);
}

constexpr auto kScenarioErrorNames = core::MakeEnumNames<ScenarioError>(
    {
        {ScenarioError::kNotSupported, "NOT_SUPPORTED"},
        {ScenarioError::kNoPermission, "NO_PERMISSION"},
        {ScenarioError::kGpuLost, "GPU_IS_LOST"},
        {ScenarioError::kUnknown, "UNKNOWN"},
        {ScenarioError::kDriverNotLoaded, "DRIVER_NOT_LOADED"},
        {ScenarioError::kLibRmVersionMismatch, "LIB_RM_VERSION_MISMATCH"},
    },
    "UNKNOWN");

std::string_view ScenarioErrorName(ScenarioError error) { return kScenarioErrorNames.Name(error); }

}  // namespace gleaner::gpu
