#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/host_metrics.h"
#include "agent/sampler.h"
#include "cluster/log.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "gpu/cuda/cuda_checkpoint.h"
#include "observe/alerts.h"
#include "observe/holder_ask.h"
#include "observe/parking.h"

namespace gleaner::agent {

struct HolderParkerOptions {
  observe::ParkingConfig config;
  std::string state_path;           // the holders it parks, across restarts
  std::string proc_root = "/proc";  // meminfo, and the holders' stat
};

// Parking held-idle GPUs' holders, carried out (docs/held-idle.md): the
// rules (observe::ParkingPlanner) say when; this tells the holder, parks
// and restores it through the CUDA driver, keeps what it parks in a state
// file across restarts, and logs and counts every step. A holder is
// restored only onto a GPU no job holds: its job is sent away first (the
// verdict says `restoring`, which claims the GPU), and only when what it
// held fits in what the GPU has free; a failed restore is tried again
// after a back-off that doubles. A holder is never killed, and never
// forgotten while the driver holds it parked, unless root gives up on it.
// Step, Recover: the sampling thread's; Parkings, Keep, Unpark: any thread.
// The driver's calls run on threads of their own (DriverCall).
class HolderParker {
 public:
  // `cuda`: null where the driver has no checkpoint API; then nothing is
  // parked, yet a state file's parked holders stay on record.
  HolderParker(const gpu::CudaCheckpoint* cuda, const core::Clock& clock,
               HolderParkerOptions options);

  void ReportTo(HostMetrics* metrics) { metrics_ = metrics; }
  // Where the holder is told, besides the log: the alert webhook.
  using Notify = std::function<void(const std::vector<observe::AlertEvent>&)>;
  void NotifyThrough(Notify notify) { notify_ = std::move(notify); }
  // Where each park and restore is recorded for the history ("parked" or
  // "restored", the GPU, the holder's user, what happened); called on the
  // thread that calls Step.
  using Record = std::function<void(const std::string& kind, const core::GpuUuid& gpu,
                                    const std::string& user, const std::string& detail)>;
  void RecordThrough(Record record) { record_ = std::move(record); }

  // The holders its state file says it parked (or was parking when it
  // stopped): those the driver still holds are watched again, one left
  // locked mid-park is let go, and those gone are forgotten. Call once,
  // first.
  void Recover(const cluster::Log& log);

  // After the pass's jobs heard their claims: tells, parks and restores.
  // `lent`: the GPUs jobs hold now; a restore waits for them to leave.
  void Step(const HostPass& pass, const std::map<core::GpuUuid, LentGpu>& lent,
            const cluster::Log& log);

  // What the sampler hands the classifier (Sampler::WatchParking).
  std::map<core::GpuUuid, observe::HolderParking> Parkings() const;

  // `gleaner keep GPU`: its holder is not parked until it computes again.
  // `gleaner unpark GPU`: its parked holder comes back now. `gpu`: a UUID
  // or an index; allowed to the holder's user and to admins.
  core::Status Keep(const std::string& gpu, const std::string& user, bool admin);
  core::Status Unpark(const std::string& gpu, const std::string& user, bool admin);
  // `gleaner unpark GPU --give-up [--kill]`, admins' alone: its parked
  // holder is no longer restored, left frozen in host memory for its user
  // to end (or, `kill`, ended), its GPU free; done at the next pass, and
  // recorded in the history.
  core::Status GiveUp(const std::string& gpu, const std::string& user, bool admin, bool kill);
  // Whichever of the above `ask` names.
  core::Status Ask(observe::HolderAsk ask, const std::string& gpu, const std::string& user,
                   bool admin);

 private:
  // A holder it parks, as the state file keeps it.
  struct Parked {
    uint32_t pid = 0;
    std::optional<core::TimePoint> started_at;  // pids are reused, start times are not
    std::string user;
    core::Bytes memory;
    core::TimePoint at;
    bool done = false;  // false: the park was under way
  };
  // A GPU's holders as last seen, for who may keep or unpark it.
  struct Seen {
    uint32_t index = 0;
    std::vector<uint32_t> pids;  // sorted
    std::set<std::string> users;
  };

  // What the driver did with a holder.
  struct DriverResult {
    core::Status status = core::Status::Ok();
    std::chrono::steady_clock::duration took{};
    bool found_running = false;  // a restore found it restored already
  };
  // A park or restore the driver carries out beside the passes: moving
  // 80 GiB to host memory took an H200's driver 43 s, and the other GPUs'
  // owners do not wait for it. One driver call at a time.
  struct DriverCall {
    observe::ParkAction action;
    bool park = true;
    std::future<DriverResult> result;
    bool said_under_way = false;
  };

  // A restore that failed: tried again after a back-off that doubles, and
  // alerted again while it lasts.
  struct RestoreTrouble {
    int failures = 0;
    std::string error;  // the last try's
    core::TimePoint retry_at;
    core::TimePoint alerted_at;
  };
  // An admin's give-up, done at the next pass.
  struct GiveUpAsk {
    bool kill = false;
    std::string by;  // empty: an admin through the coordinator
  };

  void Save(const cluster::Log& log);
  // Why a restore of `a` waits, if it must: a failed try's back-off, or
  // too little free memory on the GPU (`sample`: its last sample) for what
  // the holder held (a restore that fails for want of memory can break
  // every later restore of that process).
  std::optional<std::string> RestoreWait(const observe::ParkAction& a,
                                         const observe::GpuSample* sample,
                                         core::TimePoint now) const;
  void GiveUpNow(const core::GpuUuid& gpu, const GiveUpAsk& ask, const cluster::Log& log);
  // "its restore failed 2 times (...); tried again in 1m00s".
  static std::string BackingOff(const RestoreTrouble& t, core::TimePoint now);
  // Asks the driver to park (or restore) the holder; the result is heard
  // by FinishCalls. A failed restore is tried again at the next pass.
  void Park(const observe::ParkAction& a, const cluster::Log& log);
  void Restore(const observe::ParkAction& a, const cluster::Log& log);
  void Call(const observe::ParkAction& a, bool park, std::function<DriverResult()> driver);
  // Hears the calls done within `wait`, and says once of each that is not.
  void FinishCalls(std::chrono::milliseconds wait, const cluster::Log& log);
  void ParkDone(const observe::ParkAction& a, const DriverResult& r, const cluster::Log& log);
  void RestoreDone(const observe::ParkAction& a, const DriverResult& r, const cluster::Log& log);
  std::optional<core::Duration> CpuTime(uint32_t pid) const;
  void Tell(const std::string& rule, const core::GpuUuid& gpu, const std::string& user, bool firing,
            const std::string& summary);
  // The GPU `gpu` (a UUID or an index) names.
  core::Result<core::GpuUuid> Resolve(const std::string& gpu) const GLEANER_REQUIRES(mu_);
  // Whether `user` (or an admin) may speak for the GPU's holder.
  core::Status MaySpeakFor(const core::GpuUuid& gpu, const std::string& user, bool admin) const
      GLEANER_REQUIRES(mu_);

  const gpu::CudaCheckpoint* cuda_;
  const core::Clock& clock_;
  HolderParkerOptions options_;
  observe::ParkingPlanner planner_;
  std::map<core::GpuUuid, Parked> parked_;                   // in the state file
  std::map<core::GpuUuid, core::TimePoint> restoring_;       // since its wake, or the ask
  std::map<core::GpuUuid, RestoreTrouble> restore_trouble_;  // until restored
  std::map<core::GpuUuid, std::string> waiting_;             // why a restore waits
  HostMetrics* metrics_ = nullptr;
  Notify notify_;
  Record record_;

  mutable core::Mutex mu_;  // what the API threads read and ask
  std::map<core::GpuUuid, Seen> seen_ GLEANER_GUARDED_BY(mu_);
  std::map<core::GpuUuid, observe::HolderParking> parkings_ GLEANER_GUARDED_BY(mu_);
  // The holder pids that asked.
  std::map<core::GpuUuid, std::vector<uint32_t>> kept_ GLEANER_GUARDED_BY(mu_);
  std::set<core::GpuUuid> unpark_asked_ GLEANER_GUARDED_BY(mu_);
  std::map<core::GpuUuid, GiveUpAsk> give_up_asked_ GLEANER_GUARDED_BY(mu_);

  // One driver call at a time: guards no field, only serialises the calls
  // (each on a thread of its own).
  core::Mutex driver_mu_;
  // Last: destroyed first, each waiting for its driver call to end.
  std::map<core::GpuUuid, DriverCall> calls_;
};

// MemAvailable and MemTotal from `meminfo` (/proc/meminfo); nullopt when
// it cannot be read.
std::optional<std::pair<core::Bytes, core::Bytes>> HostMemory(const std::string& meminfo);

}  // namespace gleaner::agent
