#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "gpu/gpu_backend.h"

namespace gleaner::gpu {

// A fatal Xid outlives the process that saw it. The driver reports each Xid
// once, to the event sets open at that moment, so a daemon restarted after
// one (an upgrade, a crash, `systemctl restart`) would find the GPU healthy
// and lend it. The fault is kept in a file of the data directory until the
// host reboots (a reboot resets every GPU) or an operator who has reset the
// GPU forgets it (`gleaner gpus --forget-fault`).

struct RememberedFault {
  core::GpuUuid uuid;
  uint32_t xid = 0;
  int64_t seen_unix_s = 0;  // when this host first saw it
};

// What the file holds: the boot the faults were seen in, and the faults.
struct FaultFile {
  std::string boot_id;
  std::vector<RememberedFault> faults;
};

// This boot's identity (/proc/sys/kernel/random/boot_id); empty where the
// kernel does not say, and then faults are kept across reboots.
std::string CurrentBootId();

// The file at `path`: NotFound when absent, InvalidArgument (saying what)
// when it is not a fault file, an error on a link.
core::Result<FaultFile> ReadFaultFile(const std::string& path);
core::Status WriteFaultFile(const std::string& path, const FaultFile& file);

// Removes the faults of `uuid` ("all": every one) from the file and returns
// them; NotFound when none matched.
core::Result<std::vector<RememberedFault>> ForgetFaults(const std::string& path,
                                                        const std::string& uuid);

// A GpuBackend that remembers: every fatal Xid the wrapped backend reports
// is written to `path`, and a remembered one is reported (and judged) for
// its GPU while the driver reports none.
class FaultMemory final : public GpuBackend {
 public:
  using Log = std::function<void(const std::string&)>;
  // Reads what `path` remembers for `boot_id`; faults of another boot are
  // dropped, and an unreadable file is moved aside to PATH.corrupt, with a
  // line to `log` each time.
  FaultMemory(std::unique_ptr<GpuBackend> inner, std::string path, std::string boot_id,
              const core::Clock& clock, Log log);

  const DriverInfo& Driver() const override { return inner_->Driver(); }
  core::Result<std::vector<GpuSnapshot>> Snapshot() override;
  core::Result<std::vector<GpuSnapshot>> Recall(core::Duration ago) override;
  core::Result<std::vector<GpuLink>> Topology() override { return inner_->Topology(); }

  const std::vector<RememberedFault>& remembered() const { return remembered_; }

 private:
  core::Result<FaultFile> Load();
  void Remember(const core::GpuUuid& uuid, uint32_t xid);
  void Apply(std::vector<GpuSnapshot>& gpus) const;

  std::unique_ptr<GpuBackend> inner_;
  std::string path_;
  std::string boot_id_;
  const core::Clock& clock_;
  Log log_;
  std::vector<RememberedFault> remembered_;
};

}  // namespace gleaner::gpu
