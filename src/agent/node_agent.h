#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/executor.h"
#include "agent/sampler.h"
#include "cluster/agent_protocol.h"
#include "cluster/log.h"
#include "gpu/gpu_snapshot.h"
#include "sched/vacate.h"

namespace gleaner::agent {

// Sends one report to a coordinator and returns its reply; kUnavailable
// when none answered.
using SendReport = std::function<core::Result<cluster::AgentReply>(const cluster::AgentReport&)>;

struct NodeAgentOptions {
  std::string log_dir;              // the jobs' <id>.out and .err
  std::string state_path;           // what it runs and has not yet reported, across restarts
  std::vector<gpu::GpuLink> links;  // for the NVLink islands it reports
};

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
  NodeAgent(Executor& executor, const core::Clock& clock, NodeAgentOptions options,
            SendReport send);

  // Takes back the jobs of the state file whose processes still run; the
  // others are reported as ended, status unknown. Call once, first.
  void Recover(const cluster::Log& log);

  // Minutes completed since the last report, to send with the next one.
  void AddMinutes(const std::vector<observe::MinuteRollup>& minutes);

  void Act(const HostPass& pass, const cluster::Log& log);

  // Whether the last report got a reply.
  bool connected() const { return connected_; }

 private:
  struct Launched {
    cluster::JobAttempt of;
    std::vector<core::GpuUuid> gpus;
    int checkpoint_signal = 15;
    core::Duration grace{};
  };

  void RecordExits(const cluster::Log& log);
  void Vacate(const HostPass& pass, const cluster::Log& log);
  cluster::AgentReport Report(const HostPass& pass);
  void Obey(const cluster::AgentReply& reply, const cluster::Log& log);
  void Launch(const cluster::JobToStart& job, const cluster::Log& log);
  void Emit(cluster::JobEvent event);
  void Save(const cluster::Log& log);

  Executor& executor_;
  const core::Clock& clock_;
  NodeAgentOptions options_;
  SendReport send_;
  std::map<sched::JobId, Launched> jobs_;  // what runs here
  std::deque<cluster::JobEvent> outbox_;   // not yet acknowledged
  int64_t next_seq_ = 1;
  std::vector<observe::MinuteRollup> minutes_;  // not yet taken by a coordinator
  size_t minutes_sent_ = 0;                     // in the report under way
  sched::VacatePlanner planner_;
  std::map<sched::JobId, std::string> preempt_;  // the coordinator's, as last said
  std::set<sched::JobId> killing_;               // no longer assigned here
  std::map<sched::JobId, int> unassigned_;       // replies in a row that left it out
  std::set<cluster::JobAttempt> launched_;       // by this agent process: never twice
  core::TimePoint heard_;                        // the last reply, or the start
  core::Duration lease_{};                       // as the coordinator last said
  core::TimePoint saved_heard_;                  // heard_ as the state file has it
  bool send_inventory_ = true;
  bool connected_ = false;
  std::vector<observe::GpuState> sent_states_;   // in the report under way
  std::vector<observe::GpuState> acked_states_;  // in the last one answered
};

// What the host's GPUs look like to the scheduler.
std::vector<cluster::InventoryGpu> InventoryOf(const std::vector<gpu::GpuSnapshot>& snapshots,
                                               const std::vector<gpu::GpuLink>& links);

}  // namespace gleaner::agent
