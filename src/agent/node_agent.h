#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agent/host_metrics.h"
#include "agent/job_runner.h"
#include "agent/sampler.h"
#include "cluster/agent_protocol.h"
#include "cluster/log.h"
#include "gpu/gpu_snapshot.h"
#include "sched/vacate.h"

namespace gleaner::agent {

// Sends one report to a coordinator and returns its reply; kUnavailable
// when none answered.
using SendReport = std::function<core::Result<cluster::AgentReply>(const cluster::AgentReport&)>;

// A job this host ran before a restart, to take back.
struct HeldJob {
  cluster::JobAttempt of;
  std::vector<core::GpuUuid> gpus;
  int checkpoint_signal = 15;
  core::Duration grace{};
  std::optional<int> pid;  // with its start time: the process to adopt
  std::optional<core::TimePoint> process_started_at;
  std::string slurm_job_id;  // run through Slurm: the job to take back
  std::map<core::GpuUuid, observe::LoanBesideHolder> beside_holder;  // lent beside a holder
  std::string user;  // whose job it is; empty in a state file from before it was kept
};

struct NodeAgentOptions {
  std::string log_dir;              // the jobs' <id>.out and .err
  std::string state_path;           // what it runs and has not yet reported, across restarts
  std::vector<gpu::GpuLink> links;  // for the NVLink islands it reports
  std::string rack = {};            // the rack (or leaf switch) it declares; empty: none
  sched::HostResources host = {};   // the CPUs and memory jobs may claim; zero: not said
};

// How long after a minute ends an agent sends that minute's roll-ups:
// between 0 and 45 s, set by its run name (AgentReport::run, random), so
// that a coordinator's 10,000 agents spread their minutes over the minute
// rather than all sending them in the same second.
core::Duration MinuteSendDelay(std::string_view run);

// `gleaner agent`'s loop, a pass at a time: report the pass to the
// coordinator, start what the reply assigns and stop what it no longer
// does. What protects owners never waits for the network: a job on a GPU
// its owner claims back gets its checkpoint signal, grace and kill here,
// coordinator or not. A coordinator silent for its lease makes the agent
// stop its jobs (checkpoint signal, grace, kill); the coordinator requeues
// them elsewhere only after that, so none runs twice. Jobs outlive the agent: a restarted one
// takes them back from its state file. Not thread-safe.
class NodeAgent {
 public:
  NodeAgent(JobRunner& runner, const core::Clock& clock, NodeAgentOptions options, SendReport send);

  // Takes back the jobs of the state file whose processes still run; the
  // others are reported as ended (status unknown unless they left their
  // exit behind). Without a state file, what `without_state` returns is
  // taken back: what a daemon that kept no state file recorded elsewhere
  // (asked only then). Call once, first.
  void Recover(const cluster::Log& log,
               const std::function<std::vector<HeldJob>()>& without_state = {});

  // Where preemptions and give-backs are counted; null: nowhere.
  void ReportTo(HostMetrics* metrics) { metrics_ = metrics; }

  // Who acts on the coordinator's `gleaner keep` and `unpark` requests
  // (the host's HolderParker); without one they are logged and dropped.
  using HolderRequests =
      std::function<void(const std::vector<cluster::HolderRequest>&, const cluster::Log&)>;
  void OnHolderRequests(HolderRequests act) { on_holder_requests_ = std::move(act); }

  // Minutes completed since the last report, to send MinuteSendDelay after
  // each ends (a backlog goes at once, a slice per report).
  void AddMinutes(const std::vector<observe::MinuteRollup>& minutes);

  // Records the jobs that ended, then Exchange()s; once more when the
  // reply started a job or asked for a log, so the coordinator hears of
  // either at once.
  void Act(const HostPass& pass, const cluster::Log& log);
  // Claims back what owners (and the coordinator) want back, reports the
  // pass and does what the reply says; true when it has news to report at
  // once (a job it started, a piece of log asked for). Again
  // within a pass, it hears what the coordinator decided since (one
  // process: `gleaner up`).
  bool Exchange(const HostPass& pass, const cluster::Log& log);

  // Whether the last report got a reply.
  bool connected() const { return connected_; }

  // The GPUs its jobs hold, by job: what Sampler::WatchLending asks.
  std::map<core::GpuUuid, LentGpu> LentGpus() const;

 private:
  struct Launched {
    cluster::JobAttempt of;
    std::vector<core::GpuUuid> gpus;
    int checkpoint_signal = 15;
    core::Duration grace{};
    std::map<core::GpuUuid, observe::LoanBesideHolder> beside_holder;
    std::string reported_state;  // the runner's word on it, as last reported
    std::string user;
  };

  void TakeBack(const HeldJob& held, const cluster::Log& log);
  // The jobs of the state file's text.
  void TakeBackFromState(const std::string& text, const cluster::Log& log);
  void RecordExits(const cluster::Log& log);
  void Vacate(const HostPass& pass, const cluster::Log& log);
  // Kills, at once, a job beside a holder that uses more than it declared:
  // the holder's memory is at stake, not a grace period's worth of work.
  void StopBeyondDeclared(const HostPass& pass, const cluster::Log& log);
  cluster::AgentReport Report(const HostPass& pass);
  // True when it has news to report at once.
  bool Obey(const cluster::AgentReply& reply, const HostPass& pass, const cluster::Log& log);
  // Reads the pieces of logs the reply asks for, each once.
  void ReadLogs(const std::vector<cluster::LogRequest>& requests);
  void Launch(const cluster::JobToStart& job, const HostPass& pass, const cluster::Log& log);
  void Emit(cluster::JobEvent event);
  void Save(const cluster::Log& log);

  JobRunner& runner_;
  const core::Clock& clock_;
  NodeAgentOptions options_;
  SendReport send_;
  const std::string run_;                  // AgentReport::run
  const core::Duration minute_delay_;      // MinuteSendDelay(run_)
  std::map<sched::JobId, Launched> jobs_;  // what runs here
  std::deque<cluster::JobEvent> outbox_;   // not yet acknowledged
  int64_t next_seq_ = 1;
  std::vector<observe::MinuteRollup> minutes_;  // not yet taken by a coordinator
  size_t minutes_sent_ = 0;                     // in the report under way
  sched::VacatePlanner planner_;
  std::map<sched::JobId, std::string> preempt_;     // the coordinator's, as last said
  std::set<sched::JobId> killing_;                  // no longer assigned here
  std::map<sched::JobId, std::string> killed_for_;  // why the agent killed it
  std::map<sched::JobId, int> unassigned_;          // replies in a row that left it out
  std::set<cluster::JobAttempt> launched_;          // by this agent process: never twice
  core::TimePoint heard_;                           // the last reply, or the start
  core::Duration lease_{};                          // as the coordinator last said
  core::TimePoint saved_heard_;                     // heard_ as the state file has it
  bool send_inventory_ = true;
  bool connected_ = false;
  std::string refusal_;  // the coordinator's last word refusing a report, while it lasts
  std::vector<observe::GpuState> sent_states_;   // in the report under way
  std::vector<observe::GpuState> acked_states_;  // in the last one answered
  // A GPU's details as last sent: what they showed (state and processes)
  // and when, in the report under way and in the last one answered.
  struct DetailSent {
    std::string shows;
    core::TimePoint at;
  };
  std::vector<DetailSent> sent_details_;
  std::vector<DetailSent> acked_details_;
  std::vector<cluster::LogChunk> log_chunks_;  // asked for, not yet acknowledged
  size_t log_chunks_sent_ = 0;                 // in the report under way
  std::set<uint64_t> logs_read_;               // requests already answered
  HostMetrics* metrics_ = nullptr;
  HolderRequests on_holder_requests_;
};

// NVLink islands: GPUs linked to one another directly or through others
// share an island id (the lowest index among them); -1 without NVLink.
std::map<core::GpuUuid, int> NvlinkIslands(const std::vector<gpu::GpuLink>& links,
                                           const std::vector<gpu::GpuSnapshot>& gpus);

// What the host's GPUs look like to the scheduler.
std::vector<cluster::InventoryGpu> InventoryOf(const std::vector<gpu::GpuSnapshot>& snapshots,
                                               const std::vector<gpu::GpuLink>& links);

}  // namespace gleaner::agent
