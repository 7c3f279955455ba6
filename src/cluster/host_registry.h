#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/agent_protocol.h"
#include "cluster/log.h"
#include "core/clock.h"
#include "core/result.h"
#include "sched/scheduler.h"
#include "store/job_store.h"
#include "store/observation_store.h"

// The hosts a coordinator knows and the rules of their GPUs: which host a
// GPU is on (the one that reported it first), what a host may report, when
// a silent host is lost, whether every host known at leadership has been
// heard from. Not thread-safe: the coordinator holds it under its lock.
namespace gleaner::cluster {

// A host as the coordinator sees it, for /v1/gpus, /metrics and the logs.
struct HostView {
  enum class Health { kUp, kSilent, kLost };
  std::string name;
  Health health = Health::kUp;
  std::optional<core::TimePoint> last_report;  // since this coordinator leads
  std::vector<InventoryGpu> gpus;
  std::vector<GpuStatus> status;                  // as last reported, in `gpus` order
  std::vector<std::string> reasons;               // the verdicts' evidence, in `gpus` order
  std::vector<std::optional<GpuDetail>> details;  // processes and verdicts, in `gpus` order
  int jobs = 0;                                   // running or vacating there
};
std::string_view HealthName(HostView::Health h);

// What the coordinator keeps of one host: what it reported, its liveness,
// its jobs, and what the scheduler was last told of it.
struct KnownHost {
  // What the scheduler was last told of a GPU: whether it lends it, how
  // much beside its holder (zero: whole), and its expected quiet.
  struct Told {
    bool lendable = false;
    core::Bytes lend_memory;
    core::Duration quiet_p80{};
    bool operator==(const Told&) const = default;
  };

  std::vector<InventoryGpu> gpus;
  std::vector<GpuStatus> status;
  std::vector<std::string> reasons;
  std::vector<std::optional<GpuDetail>> details;
  core::TimePoint heard;  // the last report, or when leadership began
  bool reported = false;  // since leadership began
  bool silent = false;
  bool lost = false;
  bool blind = false;             // its last report read no GPU, or was refused
  std::string inventory_refused;  // why its GPUs, as last reported, were refused
  bool in_scheduler = false;
  std::map<sched::JobId, store::JobRecord> jobs;  // running or vacating there (a gang: on each)
  std::set<JobAttempt> running;                   // as its last report said
  std::string rack;                               // as its agent declares it
  sched::HostResources resources;                 // CPUs and memory jobs may claim, as reported
  // What the scheduler was last told of each GPU, in `gpus` order;
  // whether it held jobs then; `retell`: a report or a change of
  // liveness since.
  std::vector<Told> told;
  bool told_with_jobs = false;
  bool retell = true;
  // Jobs that were in `jobs` and are no longer, while its agent still
  // reports running them: the only ones whose end is looked up.
  std::set<sched::JobId> left;
  uint64_t orders = 0;  // AgentReply::orders
  // GPUs it reported after its first join, waiting for root to accept
  // them (HostRegistry::Accept); its reports are refused meanwhile.
  std::vector<InventoryGpu> unaccepted;

  // Heard since leadership began, and neither silent nor lost now.
  bool Reporting() const { return reported && !silent && !lost; }
};

class HostRegistry {
 public:
  // `max_gpus_per_host`: the most GPUs one host may report (0: any).
  explicit HostRegistry(size_t max_gpus_per_host) : max_gpus_per_host_(max_gpus_per_host) {}

  // At leadership: the GPUs the store knows, and their hosts, which are
  // awaited (Settled) until they report.
  void Remember(const std::vector<store::GpuRecord>& gpus);

  // A report from `name` arrived at `now`: it is alive again.
  KnownHost& Heard(const std::string& name, core::TimePoint now, const Log& log);

  // The inventory `name` reports. Refuses GPUs another host reported
  // first, more GPUs than a host may have, and GPUs new since its first
  // join until root accepts them. `records`: what to save of a new
  // inventory. True when its GPUs or rack changed: the scheduler must
  // place the node anew.
  core::Result<bool> LearnInventory(const std::string& name, KnownHost& host,
                                    std::vector<InventoryGpu> gpus, const std::string& rack,
                                    const sched::HostResources& resources, core::TimePoint now,
                                    std::vector<store::GpuRecord>* records, const Log& log);

  // Root accepts the GPUs `name` reported after its first join: they are
  // saved to `to` and are its own. How many.
  core::Result<int64_t> Accept(const std::string& name, store::ObservationStore& to,
                               core::TimePoint now, const Log& log);

  // Whether root may forget `name` now: not while it holds jobs or reports.
  core::Status MayForget(const std::string& name) const;
  // Forgets `name` and which GPUs were its own; what was known of it.
  std::optional<KnownHost> Forget(const std::string& name);

  // Marks hosts silent past `silent_after` and lost past `requeue_after`,
  // saying so once.
  void JudgeLiveness(core::TimePoint now, core::Duration silent_after, core::Duration requeue_after,
                     const Log& log);

  // Whether every host awaited since leadership began (`since`) has
  // reported with its GPUs, or `wait` has passed, after which placing
  // proceeds without the rest (said once).
  bool Settled(core::TimePoint now, core::TimePoint since, core::Duration wait, const Log& log);

  KnownHost* Find(const std::string& name);
  const KnownHost* Find(const std::string& name) const;
  // The host a GPU is on; a host first met through its jobs is added, with
  // until `now` + the lease to report. Null when no host has it.
  KnownHost* OfGpu(const core::GpuUuid& gpu, core::TimePoint now);
  // The name of the host a GPU is on; null when none.
  const std::string* NameOf(const core::GpuUuid& gpu) const;
  // The hosts holding the job's GPUs, in the order of its GPUs (a gang's
  // rank order); empty when some GPU is on no known host.
  std::vector<std::string> HostsOf(const store::JobRecord& job) const;
  bool OnHost(const std::string& name, const store::JobRecord& job) const;

  std::map<std::string, KnownHost>& all() { return hosts_; }
  const std::map<std::string, KnownHost>& all() const { return hosts_; }

  // `with_details`: each GPU's processes and verdict too.
  std::vector<HostView> Views(bool with_details) const;

 private:
  size_t max_gpus_per_host_;
  std::map<std::string, KnownHost> hosts_;
  std::map<core::GpuUuid, std::string> host_of_gpu_;
  // Hosts the store knows that have not reported since leadership began:
  // until they have, or the wait has passed, no job is placed, so a job
  // sized for the whole cluster (a gang) is not refused while part of the
  // cluster has yet to report.
  std::set<std::string> awaited_;
};

}  // namespace gleaner::cluster
