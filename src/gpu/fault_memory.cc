#include "gpu/fault_memory.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/format.h"
#include "core/json_depth.h"
#include "core/private_file.h"

namespace gleaner::gpu {

namespace {

using nlohmann::json;

core::Status NotAFaultFile(const std::string& path, const std::string& what) {
  return core::InvalidArgument(path + " is not a GPU fault file: " + what);
}

// Upserts `fault` by UUID: one remembered Xid per GPU, the newest.
void Put(std::vector<RememberedFault>& faults, const RememberedFault& fault) {
  for (RememberedFault& f : faults) {
    if (f.uuid == fault.uuid) {
      f = fault;
      return;
    }
  }
  faults.push_back(fault);
}

}  // namespace

std::string CurrentBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

core::Result<FaultFile> ReadFaultFile(const std::string& path) {
  GLEANER_ASSIGN_OR_RETURN(std::string text, core::ReadPrivateFile(path));
  const json doc = core::ParseUntrustedJson<json>(text);
  if (!doc.is_object()) return NotAFaultFile(path, "not a JSON object");
  FaultFile file;
  if (!doc.contains("boot_id") || !doc["boot_id"].is_string()) {
    return NotAFaultFile(path, "\"boot_id\" is not a string");
  }
  file.boot_id = doc["boot_id"].get<std::string>();
  const json faults = doc.value("faults", json());
  if (!faults.is_array()) return NotAFaultFile(path, "\"faults\" is not a list");
  // Whole numbers within range only: a float or a huge value would
  // overflow the conversions and the arithmetic on them.
  const auto whole = [](const json& f, const char* key, uint64_t min, uint64_t max) {
    return f.contains(key) && f[key].is_number_unsigned() && f[key].get<uint64_t>() >= min &&
           f[key].get<uint64_t>() <= max;
  };
  for (const json& f : faults) {
    if (!f.is_object() || !f.contains("uuid") || !f["uuid"].is_string() ||
        f["uuid"].get<std::string>().empty() || !whole(f, "xid", 1, UINT32_MAX) ||
        !whole(f, "seen_unix_s", 0, uint64_t{1} << 40)) {
      return NotAFaultFile(path,
                           "a fault needs \"uuid\", \"xid\" (1 or more) and \"seen_unix_s\" "
                           "(whole seconds)");
    }
    file.faults.push_back({core::GpuUuid(f["uuid"].get<std::string>()),
                           static_cast<uint32_t>(f["xid"].get<uint64_t>()),
                           f["seen_unix_s"].get<int64_t>()});
  }
  return file;
}

core::Status WriteFaultFile(const std::string& path, const FaultFile& file) {
  json faults = json::array();
  for (const RememberedFault& f : file.faults) {
    faults.push_back({{"uuid", f.uuid.str()}, {"xid", f.xid}, {"seen_unix_s", f.seen_unix_s}});
  }
  const json doc = {{"boot_id", file.boot_id}, {"faults", faults}};
  return core::ReplaceFile(path, doc.dump(2) + "\n");
}

core::Result<std::vector<RememberedFault>> ForgetFaults(const std::string& path,
                                                        const std::string& uuid) {
  auto file = ReadFaultFile(path);
  if (!file.ok() && file.status().code() == core::StatusCode::kNotFound) {
    return core::NotFound("no GPU fault is remembered here (" + path + " does not exist)");
  }
  if (!file.ok()) return file.status();
  std::vector<RememberedFault> forgotten;
  std::vector<RememberedFault> kept;
  for (const RememberedFault& f : file->faults) {
    (uuid == "all" || f.uuid.str() == uuid ? forgotten : kept).push_back(f);
  }
  if (forgotten.empty()) {
    std::string known;
    for (const RememberedFault& f : kept) known += (known.empty() ? "" : ", ") + f.uuid.str();
    return core::NotFound(
        "no fault is remembered for " + uuid +
        (known.empty() ? std::string(": none is") : "; faults are remembered for " + known));
  }
  file->faults = std::move(kept);
  GLEANER_RETURN_IF_ERROR(WriteFaultFile(path, *file));
  return forgotten;
}

FaultMemory::FaultMemory(std::unique_ptr<GpuBackend> inner, std::string path, std::string boot_id,
                         const core::Clock& clock, Log log)
    : inner_(std::move(inner)),
      path_(std::move(path)),
      boot_id_(std::move(boot_id)),
      clock_(clock),
      log_(std::move(log)) {
  auto file = Load();
  if (file.ok()) remembered_ = file->faults;
  for (const RememberedFault& f : remembered_) {
    log_("GPU " + f.uuid.str() + " is faulty: the driver reported Xid " + std::to_string(f.xid) +
         " " + core::FormatDuration(clock_.Now() - core::FromUnixMicros(f.seen_unix_s * 1000000)) +
         " ago, remembered in " + path_);
  }
}

// The file as it stands for this boot: empty where it is absent or from an
// earlier boot; moved aside where it cannot be read, so that the next write
// does not erase what a person may want to look at.
core::Result<FaultFile> FaultMemory::Load() {
  auto file = ReadFaultFile(path_);
  if (file.ok() && (boot_id_.empty() || file->boot_id == boot_id_)) return file;
  if (file.ok() && !file->faults.empty()) {
    log_("forgetting " + std::to_string(file->faults.size()) +
         " GPU fault(s) recorded before this host rebooted (a reboot resets every GPU)");
    FaultFile fresh{boot_id_, {}};
    if (core::Status s = WriteFaultFile(path_, fresh); !s.ok()) log_(s.message());
    return fresh;
  }
  if (!file.ok() && file.status().code() == core::StatusCode::kInvalidArgument) {
    const std::string aside = path_ + ".corrupt";
    const bool moved = std::rename(path_.c_str(), aside.c_str()) == 0;
    log_(file.status().message() + (moved ? "; moved to " + aside : std::string()) +
         ": GPU faults from before this start are forgotten, so check the kernel log for Xids");
  } else if (!file.ok() && file.status().code() != core::StatusCode::kNotFound) {
    log_("cannot read " + path_ + ": " + file.status().message());
    return file.status();
  }
  return FaultFile{boot_id_, {}};
}

void FaultMemory::Remember(const core::GpuUuid& uuid, uint32_t xid) {
  for (const RememberedFault& f : remembered_) {
    if (f.uuid == uuid && f.xid == xid) return;
  }
  const RememberedFault fault{uuid, xid, core::ToUnixMicros(clock_.Now()) / 1000000};
  Put(remembered_, fault);
  // Merged into the file as it is now: a fault an operator forgot since
  // this process started stays forgotten.
  auto file = Load();
  if (!file.ok()) return;  // Load said why
  Put(file->faults, fault);
  if (core::Status s = WriteFaultFile(path_, *file); !s.ok()) {
    log_("cannot remember GPU " + uuid.str() + "'s Xid " + std::to_string(xid) + ": " +
         s.message());
  }
}

void FaultMemory::Apply(std::vector<GpuSnapshot>& gpus) const {
  for (GpuSnapshot& s : gpus) {
    const auto it = std::find_if(remembered_.begin(), remembered_.end(),
                                 [&](const RememberedFault& f) { return f.uuid == s.uuid; });
    if (it == remembered_.end() || s.errors.fatal_xid.value_or(0) != 0) continue;
    s.errors.fatal_xid = Reading<uint32_t>::Of(it->xid);
    if (s.errors.last_xid.value_or(0) == 0) s.errors.last_xid = Reading<uint32_t>::Of(it->xid);
    JudgeErrors(s);
  }
}

core::Result<std::vector<GpuSnapshot>> FaultMemory::Snapshot() {
  GLEANER_ASSIGN_OR_RETURN(std::vector<GpuSnapshot> gpus, inner_->Snapshot());
  for (const GpuSnapshot& s : gpus) {
    if (const uint32_t xid = s.errors.fatal_xid.value_or(0); xid != 0 && !s.uuid.empty()) {
      Remember(s.uuid, xid);
    }
  }
  Apply(gpus);
  return gpus;
}

core::Result<std::vector<GpuSnapshot>> FaultMemory::Recall(core::Duration ago) {
  GLEANER_ASSIGN_OR_RETURN(std::vector<GpuSnapshot> gpus, inner_->Recall(ago));
  Apply(gpus);
  return gpus;
}

}  // namespace gleaner::gpu
