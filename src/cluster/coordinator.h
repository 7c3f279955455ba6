#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/agent_protocol.h"
#include "cluster/housekeeping.h"
#include "cluster/queue_feed.h"
#include "cluster/shadow_ledger.h"
#include "core/clock.h"
#include "metrics/histogram.h"
#include "sched/scheduler.h"
#include "store/store.h"

namespace gleaner::cluster {

struct CoordinatorOptions {
  sched::SchedulerConfig scheduler;
  // A host silent this long lends nothing: its GPUs are Unknown.
  core::Duration silent_after = core::Seconds(10);
  // A host silent this long is lost. It is the agents' lease: an agent that
  // has not heard from a coordinator for this long stops its jobs
  // (checkpoint signal, grace, kill), and each is requeued to run elsewhere
  // once its grace and a margin have passed as well, so none runs twice.
  core::Duration requeue_after = core::Seconds(300);
  // For the cluster's hour-of-week profiles by project.
  std::map<std::string, std::string> project_of_user;
  // The one agent runs in this process (`gleaner up`): starts carry the
  // submitter's uid (the store's uids are the host's), and what the agent
  // logs itself (a start, a vacating job) is not logged twice.
  bool agent_in_process = false;
  // Jobs that wait for an approver this long are cancelled as expired;
  // events older than the retention are dropped (Housekeeping).
  core::Duration approval_timeout = core::Seconds(int64_t{3} * 24 * 3600);
  core::Duration history_retention = core::Seconds(int64_t{365} * 24 * 3600);
  // Shadow mode: jobs are placed as ever, but none starts; what would
  // have run where is logged, counted (Shadow) and put in the jobs'
  // reasons.
  bool shadow = false;
  // The most GPUs one host may report (0: any): an agent that claims
  // thousands would take the whole queue, and other users' jobs with it.
  size_t max_gpus_per_host = 0;
};

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

// The leading coordinator's view of the cluster: one sched::Scheduler over
// every agent's GPUs, the store as the truth about jobs. Agents report
// (HandleReport); Tick, a few times a second, judges which hosts are
// silent or lost, reads the queue and places jobs. A start is a
// compare-and-set in the store that also claims the GPUs, so neither a job
// nor a GPU is ever given twice, whatever another coordinator does. An agent
// learns what to run from the reply to its next report. Thread-safe; the
// store (a connection of its own) and the clock must outlive it.
class Coordinator {
 public:
  // Leadership begins now: running jobs are read from the store, and every
  // host holding one gets `requeue_after` from now to report. `reports`, a
  // connection of its own, takes what reports bring only for the store
  // (inventories, minutes) outside the coordinator's lock; without it they
  // go to `store` under the lock.
  Coordinator(store::Store& store, const core::Clock& clock, CoordinatorOptions options,
              const Log& log, store::ObservationStore* reports = nullptr);

  // One report from agent `agent` (the name its credential proves). Fails
  // (kUnavailable) only when the store cannot take it: the agent then sends
  // it all again, which changes nothing twice.
  core::Result<AgentReply> HandleReport(const std::string& agent, const AgentReport& report,
                                        const Log& log);

  // Liveness, the queue, one scheduler pass.
  void Tick(const Log& log);

  // Calls `wake` with the host's order count (AgentReply::orders) once it
  // is past `seen`: at once if it is already, else when this coordinator
  // next decides something for the host (a start, a preemption, a cancel).
  // A host has one wait: a new one ends the one before, whose `wake` then
  // gets the count as it is. `wake` is never called under the
  // coordinator's lock. An agent long-polls with it, so it hears of a
  // start at once instead of at its next report.
  void WaitForOrders(const std::string& agent, uint64_t seen, std::function<void(uint64_t)> wake);

  // A piece of `job`'s log (at most kMaxLogChunkBytes from `offset`), from
  // the agent of the host where it runs or ran: asked for in the host's
  // next reply (its long poll wakes it), sent in the report after. `answer`
  // is called once, never under the lock: with the piece, or why there is
  // none (no host known, the host not reporting, 10 s without an answer).
  void ReadLog(const store::JobRecord& job, bool err, uint64_t offset,
               std::function<void(core::Result<LogChunk>)> answer);

  // `gleaner keep GPU` or `gleaner unpark GPU` (its UUID) on the GPU's
  // host, by `user`: allowed to a user of a process holding it (or of its
  // parked holder) and to admins, as the host last reported them; giving
  // up on a parked holder to admins alone. The host acts on it when it
  // hears its next reply (its long poll wakes it).
  core::Status AskHolder(const std::string& gpu, observe::HolderAsk ask, const std::string& user,
                         bool admin);

  // `gleaner host forget NAME` (root): the GPUs host `name` reported are
  // no longer its, so that another host may report them (a GPU moved, a
  // host renamed); nothing else ever moves a GPU between hosts. Refused
  // while the host reports or holds jobs. How many GPUs it had.
  core::Result<int64_t> ForgetHost(const std::string& name, const Log& log);

  // `gleaner host accept NAME` (root): the GPUs host `name` reported after
  // its first join, refused until now, are its own (a GPU added or
  // replaced); how many. Its agent's next report is heard.
  core::Result<int64_t> AcceptHostGpus(const std::string& name, const Log& log);

  // `with_details`: each GPU's processes and verdict too, which only the
  // gleaner.cluster/v1 document shows (not /metrics).
  std::vector<HostView> Hosts(bool with_details = false) const;
  // Seconds from submit to the agent's report that the job started.
  metrics::Histogram::Snapshot StartLatency() const { return start_latency_.Read(); }
  // What shadow mode would have harvested; nullopt unless in shadow mode.
  std::optional<ShadowLedger::Totals> Shadow() const;

 private:
  // What the scheduler was last told of a GPU: whether it lends it, how
  // much beside its holder (zero: whole), and its expected quiet.
  struct Told {
    bool lendable = false;
    core::Bytes lend_memory;
    core::Duration quiet_p80{};
    bool operator==(const Told&) const = default;
  };
  struct Host {
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
    // them (AcceptHostGpus); its reports are refused meanwhile.
    std::vector<InventoryGpu> unaccepted;
  };

  // The host has something new to hear: its count grows and its waiter
  // is woken once the lock is released (wakes_).
  void NewOrders(const std::string& name, Host& host);
  void NewOrdersForJob(sched::JobId job);
  void RunWakes(std::unique_lock<std::mutex>& lock);

  core::Status Apply(const std::string& agent, Host& host, const JobEvent& e, const Log& log);
  core::Status ApplyExit(const std::string& agent, Host& host, const store::JobRecord& job,
                         const JobEvent& e, const Log& log);
  // Refuses GPUs another host reported first, more GPUs than a host may
  // have, and GPUs new since its first join until root accepts them;
  // `records`: what to save of a new inventory.
  core::Status LearnInventory(const std::string& agent, Host& host, std::vector<InventoryGpu> gpus,
                              const std::string& rack, const sched::HostResources& resources,
                              std::vector<store::GpuRecord>* records, const Log& log);
  // What a report brings that only the store keeps: its host's GPU
  // records (a new inventory) and its minutes.
  struct ReportWrites {
    const std::string& run;  // AgentReport::run
    const std::vector<store::GpuRecord>& gpus;
    const std::vector<observe::MinuteRollup>& minutes;
    core::Status status = core::Status::Ok();  // the minutes' (GPU records that fail are said only)
    bool done = false;
  };
  // Saves the batch's GPU records in one transaction, and its minutes
  // (once per agent run) in another.
  void WriteReported(store::ObservationStore& to, const std::vector<ReportWrites*>& batch,
                     const Log& log);
  // On `reports_`: a report waits for the batch under way, if any, then
  // writes everything queued meanwhile, its own among them (group commit).
  core::Status WriteInBatch(ReportWrites& mine, const Log& log);
  // What the host should run; `ended`: attempts the report says ended,
  // never started again even where their end could not be applied.
  AgentReply ReplyTo(const std::string& name, const Host& host, const AgentReport& report,
                     const std::set<JobAttempt>& ended) const;
  // The hosts holding the job's GPUs, in the order of its GPUs (a gang's
  // rank order); empty when some GPU is on no known host.
  std::vector<std::string> HostsOf(const store::JobRecord& job) const;
  bool OnHost(const std::string& name, const store::JobRecord& job) const;
  // One member of a gang ended: the gang ends once every member has, the
  // first member's failure deciding how; meanwhile a failure stops the rest.
  core::Status ApplyGangExit(const std::string& agent, const store::JobRecord& job,
                             const JobEvent& e, const Log& log);
  // Whether a gang's member on `name` is known to run no more without its
  // exit having been seen: the job started before this coordinator led,
  // and the host reports since without it.
  bool MemberGone(const std::string& name, const store::JobRecord& job) const;
  void JudgeLiveness(const Log& log);
  // Requeues the jobs of a lost host that its agent has stopped by now.
  void RequeueStopped(const std::string& agent, Host& host, core::Duration quiet, const Log& log);
  // The running and vacating jobs, by host; false when the store failed.
  bool ReadActive(std::vector<store::JobRecord>* active, const Log& log);
  void TellGpus(const Log& log);
  // Tells the scheduler of the host's jobs it did not start (running
  // before this coordinator led), so they count for fair share and quotas
  // and can be preempted.
  void AdoptRunning(const std::string& name, const Host& host, const Log& log);
  bool Lendable(const Host& host, size_t at) const;
  // What the GPU lends beside its holder, as its host last said; zero:
  // whole.
  core::Bytes LendMemory(const Host& host, size_t at) const;
  core::Duration QuietWindow(const Host& host, size_t at) const;
  void Tell(const sched::Event& event, const Log& log);
  void Carry(const sched::Action& action, const Log& log);
  bool Start(const sched::StartJob& start, const Log& log);
  // Shadow mode's start: on the books, not in the store.
  void ShadowStart(const sched::StartJob& start, const Log& log);
  void ReportExit(sched::JobId id, bool succeeded, const std::string& reason, const Log& log);
  // A job succeeded at `end`: how long its last run took is learned.
  void LearnRuntime(const store::JobRecord& job, core::TimePoint end);
  void ReadRuntimes(const Log& log);
  Host* HostOfGpu(const core::GpuUuid& gpu);

  mutable std::mutex mu_;
  store::Store& store_;
  store::ObservationStore* reports_;  // may be null
  std::mutex reports_mu_;             // guards the next three
  std::condition_variable reports_written_;
  std::vector<ReportWrites*> to_write_;  // reports waiting for the next batch
  bool writing_ = false;                 // a batch is being written
  const core::Clock& clock_;
  CoordinatorOptions options_;
  Housekeeping housekeeping_;
  ShadowLedger shadow_;
  std::map<std::string, Host> hosts_;
  std::map<core::GpuUuid, std::string> host_of_gpu_;
  sched::Scheduler scheduler_;
  sched::RuntimeHistory runtimes_;  // succeeded jobs' lengths, for placement
  QueueFeed queue_;
  std::vector<sched::Action> decided_;
  std::map<sched::JobId, std::string> preempting_;     // the scheduler's victims, and why
  std::map<sched::JobId, sched::ResizeJob> resizing_;  // elastic jobs leaving to shrink
  metrics::Histogram start_latency_;
  core::TimePoint leader_since_;
  // Hosts the store knows that have not reported since leadership began:
  // until they have, or `silent_after` has passed, no job is placed, so a
  // job sized for the whole cluster (a gang) is not refused while part of
  // the cluster has yet to report.
  std::set<std::string> awaited_;
  bool Settled(const Log& log);
  // Gangs some of whose members have ended, this attempt: which hosts', and
  // the first failure (the state it moves the job to, and why).
  struct GangEnd {
    int attempt = 0;
    std::set<std::string> ended;
    std::optional<std::pair<store::JobState, std::string>> failure;  // the first heard
    // The host whose member's leaving stopped the others, and how that
    // member ended: the gang's reason, whichever member's end comes first.
    std::string cause;
    std::optional<std::pair<store::JobState, std::string>> cause_failure;
  };
  GangEnd& GangEndOf(const store::JobRecord& job);
  std::map<sched::JobId, GangEnd> gang_ends_;
  std::set<sched::JobId> unplaced_said_;  // jobs on GPUs of no known host, logged once
  std::set<sched::JobId> not_adopted_;    // running jobs the scheduler refused to count
  // Each host's agent's long poll, by host name: an agent may wait before
  // its first report reaches this coordinator.
  std::map<std::string, std::function<void(uint64_t)>> waiters_;
  std::vector<std::function<void()>> wakes_;  // waiters to call once mu_ is released
  struct PendingLog {
    std::string host;
    LogRequest request;
    std::function<void(core::Result<LogChunk>)> answer;
    core::TimePoint asked;
  };
  std::map<uint64_t, PendingLog> pending_logs_;  // by request id
  // `gleaner keep` and `unpark` to pass on in each host's next reply.
  std::map<std::string, std::vector<HolderRequest>> holder_requests_;
  uint64_t next_log_id_ = 1;
  // Hands the host's agent's log pieces to their askers, and asks it for
  // the ones still wanted.
  void ExchangeLogs(const std::string& agent, const AgentReport& report, AgentReply* reply);
  void ExpireLogRequests();
};

}  // namespace gleaner::cluster
