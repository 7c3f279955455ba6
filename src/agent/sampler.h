#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <vector>

#include "agent/process_info.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "gpu/gpu_backend.h"
#include "observe/colocation.h"
#include "observe/idle_classifier.h"
#include "observe/lending.h"
#include "observe/minute_rollup.h"
#include "observe/usage_profile.h"
#include "store/observation_store.h"

namespace gleaner::agent {

struct SamplerOptions {
  core::Duration interval = core::Seconds(1);
  core::Duration retention = core::Seconds(int64_t{90} * 24 * 3600);
  observe::IdleConfig idle;
  std::map<std::string, std::string> project_of_user;
  std::string host;  // recorded with each GPU
  // Lending memory beside quiet holders (docs/held-idle.md); nullopt: never.
  std::optional<observe::ColocationConfig> colocation = observe::ColocationConfig{};
  // A pilot's GPUs ([rules.lend]): the others are judged, never lent.
  observe::LendAllowList lend_allow;
};

// A GPU lent to a job that runs now, as the agent knows it.
struct LentGpu {
  int64_t job = 0;
  // The session gleaner started the job in (its keeper's pid): a process
  // is the job's only if it runs there and names the job.
  std::optional<uint32_t> session;
  std::optional<observe::LoanBesideHolder> beside_holder;  // lent beside its holder
  // Run through Slurm (bridge mode): a process is the job's when Slurm
  // placed it in this job (its cgroup, or where Slurm gives none, its
  // environment) and it runs as the job's user (the environment is the
  // process's own claim).
  std::string slurm_job;
  std::optional<uint32_t> slurm_job_uid;
  // Whose job it is: the history names them for the GPU's lent minutes
  // even while no process of the job shows on the GPU.
  std::string user;
};

// One pass over the host: each GPU's sample and verdict.
struct HostPass {
  core::TimePoint at;
  std::vector<gpu::GpuSnapshot> snapshots;
  std::vector<observe::GpuSample> samples;  // same order as snapshots
  std::vector<observe::Verdict> verdicts;   // same order as snapshots
};

// Polls the GpuBackend, attributes processes, judges every GPU, rolls
// samples up per minute into the store, keeps usage profiles and prunes
// history past the retention. Raw samples live only in the classifier's
// windows. The backend, inspector, store and clock must outlive it; the
// store may be null (nothing is kept). Not thread-safe, except Run's stop
// flag.
class Sampler {
 public:
  Sampler(gpu::GpuBackend& backend, const ProcessInspector& inspector,
          store::ObservationStore* store, const core::Clock& clock, SamplerOptions options);

  // One pass now. Store errors do not stop sampling: they are returned in
  // `store_status` for the caller to report.
  core::Result<HostPass> SampleOnce(core::Status* store_status = nullptr);

  // Samples every interval until `stop` is true, calling `on_pass` after
  // each pass. Flushes open roll-ups before returning.
  void Run(const std::atomic<bool>& stop,
           const std::function<void(const HostPass&, const core::Status&)>& on_pass);
  // A flood of Wakes costs at most one pass per this.
  static constexpr std::chrono::milliseconds kMinPassSpacing{20};
  // Makes Run's next pass come now (at most one per kMinPassSpacing), for
  // news that should not wait for the interval: a job submitted. Any
  // thread.
  void Wake();

  // Feeds the classifier what the backend remembers of the last `span`
  // (GpuBackend::Recall), a pass per interval, so that verdicts start with
  // history. Nothing recalled is stored. Returns how far back it reached:
  // zero where the backend keeps no history. Call before the first pass.
  core::Duration Recall(core::Duration span);

  // What ResumeFromStore found.
  struct Resumed {
    int gpus = 0;              // GPUs whose verdicts go on from stored minutes
    core::Duration longest{};  // the longest history one of them resumed
    bool pause_model = false;  // what was learned about pauses, restored
  };
  // Resumes each of this host's GPUs from the minutes the store kept
  // (IdleClassifier::Resume; the forecast from a week of their quiet
  // spells) and the pause model from where it was saved, so that a
  // restarted daemon judges and forecasts from its history at once. Call
  // before the first pass, after Recall: recalled GPUs keep what they
  // recalled. A store error leaves the classifier watching afresh.
  core::Result<Resumed> ResumeFromStore();

  // Completes and stores the open minutes.
  core::Status Flush();

  // The GPUs lent to jobs that run now, by job (the agent's word), asked
  // at each pass: a lent GPU reads as harvested whether or not its job's
  // process shows on it.
  using LentGpus = std::function<std::map<core::GpuUuid, LentGpu>()>;
  void WatchLending(LentGpus lent) { lent_ = std::move(lent); }
  // The holders told they will be parked, parked or being restored (the
  // agent's word, HolderParker::Parkings), asked at each pass: a parked
  // holder is not on its GPU to be seen.
  using Parkings = std::function<std::map<core::GpuUuid, observe::HolderParking>()>;
  void WatchParking(Parkings parkings) { parkings_ = std::move(parkings); }
  // A new policy's lending allow-list ([rules.lend]), from the next pass
  // on; on the sampling thread (Run's callback) only.
  void SetLendAllow(observe::LendAllowList allow) { options_.lend_allow = std::move(allow); }
  // The idle rules of a policy applied while running ([idle]), from the
  // next pass; a gap of three intervals still counts as one sample.
  void SetIdleConfig(observe::IdleConfig idle) {
    idle.max_sample_gap = std::max(idle.max_sample_gap, 3 * options_.interval);
    options_.idle = idle;
    classifier_.Reconfigure(std::move(idle));
  }

  const observe::IdleClassifier& classifier() const { return classifier_; }

 private:
  observe::GpuSample ToSample(const gpu::GpuSnapshot& s, core::TimePoint at,
                              const LentGpu* lent = nullptr) const;
  // The holders' history from the minutes the store kept, once, before
  // the first pass: a restart does not forget a week of peaks.
  core::Status LearnStoredHolders(core::TimePoint now);
  core::Status Persist(const std::vector<observe::MinuteRollup>& done,
                       const std::vector<observe::Verdict>& changed, core::TimePoint now);
  // Records the GPUs when they change, and hourly so last_seen stays true.
  core::Status RecordGpus(const std::vector<gpu::GpuSnapshot>& snapshots, core::TimePoint now);

  gpu::GpuBackend& backend_;
  const ProcessInspector& inspector_;
  store::ObservationStore* store_;
  const core::Clock& clock_;
  SamplerOptions options_;
  observe::IdleClassifier classifier_;
  observe::MinuteRollupBuilder rollups_;
  std::optional<observe::HolderLearner> holders_;
  bool stored_holders_learned_ = false;
  // Each GPU's last saved state, and when it was saved.
  std::map<core::GpuUuid, std::pair<observe::GpuState, core::TimePoint>> saved_;
  std::optional<core::TimePoint> last_prune_;
  std::vector<store::GpuRecord> recorded_gpus_;  // as last saved, first_seen aside
  std::optional<core::TimePoint> gpus_recorded_at_;
  LentGpus lent_;
  Parkings parkings_;
  core::Mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool woken_ GLEANER_GUARDED_BY(wake_mu_) = false;
};

}  // namespace gleaner::agent
