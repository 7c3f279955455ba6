#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/agent_protocol.h"
#include "cluster/agent_relays.h"
#include "cluster/host_registry.h"
#include "cluster/housekeeping.h"
#include "cluster/queue_feed.h"
#include "cluster/report_writer.h"
#include "cluster/shadow_ledger.h"
#include "core/clock.h"
#include "core/mutex.h"
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

// The leading coordinator's view of the cluster: one sched::Scheduler over
// every agent's GPUs, the store as the truth about jobs. Agents report
// (HandleReport); Tick, a few times a second, judges which hosts are
// silent or lost, reads the queue and places jobs. A start is a
// compare-and-set in the store that also claims the GPUs, so neither a job
// nor a GPU is ever given twice, whatever another coordinator does. An agent
// learns what to run from the reply to its next report. Thread-safe; the
// store (a connection of its own) and the clock must outlive it.
//
// It is the scheduler driver, the one interpreter of the scheduler's
// actions, over parts with one job each: the HostRegistry (hosts, their
// GPUs, liveness), the relays to the agents (OrderWaiters, LogRelay,
// HolderRelay) and the ReportWriter. One lock guards all but the last;
// the compiler checks its rules (GLEANER_GUARDED_BY, core/mutex.h).
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
                                        const Log& log) GLEANER_EXCLUDES(mu_);

  // Liveness, the queue, one scheduler pass.
  void Tick(const Log& log) GLEANER_EXCLUDES(mu_);

  // Calls `wake` with the host's order count (AgentReply::orders) once it
  // is past `seen`: at once if it is already, else when this coordinator
  // next decides something for the host (a start, a preemption, a cancel).
  // A host has one wait: a new one ends the one before, whose `wake` then
  // gets the count as it is. `wake` is never called under the
  // coordinator's lock. An agent long-polls with it, so it hears of a
  // start at once instead of at its next report.
  void WaitForOrders(const std::string& agent, uint64_t seen, std::function<void(uint64_t)> wake)
      GLEANER_EXCLUDES(mu_);

  // A piece of `job`'s log (at most kMaxLogChunkBytes from `offset`), from
  // the agent of the host where it runs or ran: asked for in the host's
  // next reply (its long poll wakes it), sent in the report after. `answer`
  // is called once, never under the lock: with the piece, or why there is
  // none (no host known, the host not reporting, 10 s without an answer).
  void ReadLog(const store::JobRecord& job, bool err, uint64_t offset,
               std::function<void(core::Result<LogChunk>)> answer) GLEANER_EXCLUDES(mu_);

  // `gleaner keep GPU` or `gleaner unpark GPU` (its UUID) on the GPU's
  // host, by `user`: allowed to a user of a process holding it (or of its
  // parked holder) and to admins, as the host last reported them; giving
  // up on a parked holder to admins alone. The host acts on it when it
  // hears its next reply (its long poll wakes it).
  core::Status AskHolder(const std::string& gpu, observe::HolderAsk ask, const std::string& user,
                         bool admin) GLEANER_EXCLUDES(mu_);

  // `gleaner host forget NAME` (root): the GPUs host `name` reported are
  // no longer its, so that another host may report them (a GPU moved, a
  // host renamed); nothing else ever moves a GPU between hosts. Refused
  // while the host reports or holds jobs. How many GPUs it had.
  core::Result<int64_t> ForgetHost(const std::string& name, const Log& log) GLEANER_EXCLUDES(mu_);

  // `gleaner host accept NAME` (root): the GPUs host `name` reported after
  // its first join, refused until now, are its own (a GPU added or
  // replaced); how many. Its agent's next report is heard.
  core::Result<int64_t> AcceptHostGpus(const std::string& name, const Log& log)
      GLEANER_EXCLUDES(mu_);

  // `with_details`: each GPU's processes and verdict too, which only the
  // gleaner.cluster/v1 document shows (not /metrics).
  std::vector<HostView> Hosts(bool with_details = false) const GLEANER_EXCLUDES(mu_);
  // Seconds from submit to the agent's report that the job started.
  metrics::Histogram::Snapshot StartLatency() const { return start_latency_.Read(); }
  // What shadow mode would have harvested; nullopt unless in shadow mode.
  std::optional<ShadowLedger::Totals> Shadow() const GLEANER_EXCLUDES(mu_);

 private:
  using Host = KnownHost;
  using Told = KnownHost::Told;

  // The host has something new to hear: its count grows and its waiter
  // is woken once the lock is released (calls_).
  void NewOrders(const std::string& name, Host& host) GLEANER_REQUIRES(mu_);
  void NewOrdersForJob(sched::JobId job) GLEANER_REQUIRES(mu_);

  core::Status Apply(const std::string& agent, Host& host, const JobEvent& e, const Log& log)
      GLEANER_REQUIRES(mu_);
  core::Status ApplyExit(const std::string& agent, Host& host, const store::JobRecord& job,
                         const JobEvent& e, const Log& log) GLEANER_REQUIRES(mu_);
  // What the host should run; `ended`: attempts the report says ended,
  // never started again even where their end could not be applied.
  AgentReply ReplyTo(const std::string& name, const Host& host, const AgentReport& report,
                     const std::set<JobAttempt>& ended) const GLEANER_REQUIRES(mu_);
  // One member of a gang ended: the gang ends once every member has, the
  // first member's failure deciding how; meanwhile a failure stops the rest.
  core::Status ApplyGangExit(const std::string& agent, const store::JobRecord& job,
                             const JobEvent& e, const Log& log) GLEANER_REQUIRES(mu_);
  // Whether a gang's member on `name` is known to run no more without its
  // exit having been seen: the job started before this coordinator led,
  // and the host reports since without it.
  bool MemberGone(const std::string& name, const store::JobRecord& job) const GLEANER_REQUIRES(mu_);
  // Requeues the jobs of a lost host that its agent has stopped by now.
  void RequeueStopped(const std::string& agent, Host& host, core::Duration quiet, const Log& log)
      GLEANER_REQUIRES(mu_);
  // The running and vacating jobs, by host; false when the store failed.
  bool ReadActive(std::vector<store::JobRecord>* active, const Log& log) GLEANER_REQUIRES(mu_);
  void TellGpus(const Log& log) GLEANER_REQUIRES(mu_);
  // Tells the scheduler of the host's jobs it did not start (running
  // before this coordinator led), so they count for fair share and quotas
  // and can be preempted.
  void AdoptRunning(const std::string& name, const Host& host, const Log& log)
      GLEANER_REQUIRES(mu_);
  bool Lendable(const Host& host, size_t at) const GLEANER_REQUIRES(mu_);
  // What the GPU lends beside its holder, as its host last said; zero:
  // whole.
  static core::Bytes LendMemory(const Host& host, size_t at);
  static core::Duration QuietWindow(const Host& host, size_t at);
  void Tell(const sched::Event& event, const Log& log) GLEANER_REQUIRES(mu_);
  void Carry(const sched::Action& action, const Log& log) GLEANER_REQUIRES(mu_);
  bool Start(const sched::StartJob& start, const Log& log) GLEANER_REQUIRES(mu_);
  // Shadow mode's start: on the books, not in the store.
  void ShadowStart(const sched::StartJob& start, const Log& log) GLEANER_REQUIRES(mu_);
  void ReportExit(sched::JobId id, bool succeeded, const std::string& reason, const Log& log)
      GLEANER_REQUIRES(mu_);
  // A job succeeded at `end`: how long its last run took is learned.
  void LearnRuntime(const store::JobRecord& job, core::TimePoint end) GLEANER_REQUIRES(mu_);
  void ReadRuntimes(const Log& log) GLEANER_REQUIRES(mu_);

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
  GangEnd& GangEndOf(const store::JobRecord& job) GLEANER_REQUIRES(mu_);

  const core::Clock& clock_;
  const CoordinatorOptions options_;
  const core::TimePoint leader_since_;
  metrics::Histogram start_latency_;  // thread-safe itself
  // Takes what reports bring only for the store on a connection of its
  // own, outside the lock; null: written to `store_` under the lock.
  std::unique_ptr<ReportWriter> reports_;

  // One lock over the rest: a report, a tick and a request each hold it
  // for their work, and call out (waiters, askers, the report writer)
  // only once it is released.
  mutable core::Mutex mu_;
  store::Store* const store_ GLEANER_PT_GUARDED_BY(mu_);
  HostRegistry hosts_ GLEANER_GUARDED_BY(mu_);
  // The scheduler driver: the one interpreter of the scheduler's actions.
  sched::Scheduler scheduler_ GLEANER_GUARDED_BY(mu_);
  sched::RuntimeHistory runtimes_ GLEANER_GUARDED_BY(mu_);  // succeeded jobs' lengths
  QueueFeed queue_ GLEANER_GUARDED_BY(mu_);
  Housekeeping housekeeping_ GLEANER_GUARDED_BY(mu_);
  ShadowLedger shadow_ GLEANER_GUARDED_BY(mu_);
  std::vector<sched::Action> decided_ GLEANER_GUARDED_BY(mu_);
  // The scheduler's victims, and why; elastic jobs leaving to shrink.
  std::map<sched::JobId, std::string> preempting_ GLEANER_GUARDED_BY(mu_);
  std::map<sched::JobId, sched::ResizeJob> resizing_ GLEANER_GUARDED_BY(mu_);
  std::map<sched::JobId, GangEnd> gang_ends_ GLEANER_GUARDED_BY(mu_);
  // Jobs on GPUs of no known host, logged once; running jobs the
  // scheduler refused to count.
  std::set<sched::JobId> unplaced_said_ GLEANER_GUARDED_BY(mu_);
  std::set<sched::JobId> not_adopted_ GLEANER_GUARDED_BY(mu_);
  // Waiters and relays between askers and the hosts' agents.
  OrderWaiters waiters_ GLEANER_GUARDED_BY(mu_);
  LogRelay logs_ GLEANER_GUARDED_BY(mu_);
  HolderRelay holder_asks_ GLEANER_GUARDED_BY(mu_);
  DeferredCalls calls_ GLEANER_GUARDED_BY(mu_);  // to run once mu_ is released
};

}  // namespace gleaner::cluster
