#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/units.h"
#include "observe/gpu_sample.h"
#include "observe/verdict.h"

// Parking a forgotten holder (docs/held-idle.md): when a held-idle GPU's
// holder is told, parked (its GPU memory moved to host memory) and
// restored. Pure: time and facts are passed in, and the daemon carries out
// what the planner says, then tells it how that went.
namespace gleaner::observe {

struct ParkingConfig {
  bool enabled = false;  // off by default: parking acts on someone's process
  // Held idle this long, the holder is told it will be parked.
  core::Duration park_idle_timeout = core::Seconds(3600);
  // Then parked, unless it refuses (gleaner keep) or wakes meanwhile.
  core::Duration notice = core::Seconds(600);
  // Restored after this long parked, whatever else; zero: never.
  core::Duration max_park = core::Seconds(int64_t{24} * 3600);
  // Host memory kept free beside the parked memory, as a share of it all.
  double host_memory_margin_share = 0.10;
  // Users whose processes are never parked (their own opt-out).
  std::vector<std::string> never_park_users;
  // How long a park waits for the work the holder submitted: one inside a
  // long kernel is not idle, and must not hold the daemon up.
  core::Duration lock_timeout = core::Seconds(10);
};

// One GPU as the planner needs it, each pass.
struct ParkFacts {
  Verdict verdict;
  std::vector<ObservedProcess> holders;  // the processes gleaner did not start
  bool kept = false;                     // the holder refused parking until it is busy again
  bool unpark_asked = false;             // `gleaner unpark`, or the dashboard
};

struct ParkAction {
  enum class Kind {
    kNotify,   // tell the holder it will be parked at `at`
    kPark,     // park `pid` now
    kRestore,  // vacate the GPU's job, then restore `pid` (again each pass until done)
    kForget,   // nothing to restore: the holder is gone, or the notice lapsed
  };
  Kind kind = Kind::kNotify;
  core::GpuUuid gpu;
  uint32_t pid = 0;
  std::string user;    // the holder's, empty when unknown
  core::Bytes memory;  // what the holder holds (park), or held (restore)
  core::TimePoint at;  // kNotify: when it will be parked
  std::string reason;  // in words, for the log and the holder
};

class ParkingPlanner {
 public:
  explicit ParkingPlanner(ParkingConfig config) : config_(std::move(config)) {}

  // What to do now. `host_available`/`host_total`: the host's
  // MemAvailable and MemTotal (nullopt: unknown, nothing is parked).
  // `cpu_time` reads a parked holder's CPU time (utime + stime), nullopt
  // once it is gone.
  std::vector<ParkAction> Plan(
      const std::vector<ParkFacts>& gpus, std::optional<core::Bytes> host_available,
      core::Bytes host_total,
      const std::function<std::optional<core::Duration>(uint32_t)>& cpu_time, core::TimePoint now);

  // What the daemon did with a kPark or kRestore.
  void Parked(const core::GpuUuid& gpu, core::Duration cpu_time, core::TimePoint at);
  // The holder runs on; it is not tried again for park_idle_timeout.
  void ParkFailed(const core::GpuUuid& gpu, core::TimePoint at);
  // Restored and unlocked, or given up on by root: no longer watched.
  // Until then Plan says kRestore at every pass: the job on the GPU leaves
  // first, and a failed restore is tried again (a woken holder blocks in
  // its first CUDA call, so its wake is not seen twice; it must not be
  // forgotten).
  void Release(const core::GpuUuid& gpu);

  // A holder the daemon finds parked when it starts (its state file, and
  // the driver's word): watched for waking like one it parked itself.
  void Adopt(const core::GpuUuid& gpu, uint32_t pid, std::string user, core::Bytes memory,
             core::Duration cpu_time, core::TimePoint parked_at);

  // Each GPU whose holder is told, parked or being restored, as the
  // sampler hands it to the classifier (a parked process is not on the GPU
  // to be seen).
  std::map<core::GpuUuid, HolderParking> Parkings() const;

  const ParkingConfig& config() const { return config_; }

 private:
  enum class Phase { kNoticed, kParking, kParked, kRestoring, kFailed };
  struct Track {
    Phase phase = Phase::kNoticed;
    uint32_t pid = 0;
    std::string user;
    core::Bytes memory;
    core::TimePoint since;  // the notice, the park, or the failed park
    core::Duration cpu{};   // parked: CPU time at the last pass
    core::TimePoint cpu_at;
    std::string why;  // restoring: why
  };
  std::optional<std::string> WhyNot(const ParkFacts& f, std::optional<core::Bytes> host_available,
                                    core::Bytes host_total, core::TimePoint now) const;

  ParkingConfig config_;
  std::map<core::GpuUuid, Track> tracks_;
};

}  // namespace gleaner::observe
