#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/units.h"
#include "observe/holder_ask.h"
#include "observe/minute_rollup.h"
#include "observe/verdict.h"
#include "sched/cluster_state.h"
#include "store/job_store.h"

// What an agent and its coordinator say to each other (docs/cluster.md).
// The agent reports once a pass (1 Hz) and the reply says what the host
// should run: the protocol is level-triggered, so a lost message costs one
// pass, never a job. Events (a job started, is vacating, ended) are numbered
// and sent again until acknowledged; applying one twice changes nothing.
namespace gleaner::cluster {

// The protocol's version, in every report. A coordinator accepts its own
// and the one before, so a rolling upgrade (coordinators first, then the
// agents) never cuts a host off. 2: replies may carry `cancel`; an agent of
// version 1 ignores it and kills a cancelled job once two replies leave it
// out.
inline constexpr int kProtocolVersion = 2;
inline constexpr int kOldestProtocolVersion = kProtocolVersion - 1;

// A GPU as the scheduler places on it; sent when the coordinator asks.
struct InventoryGpu {
  core::GpuUuid uuid;
  int index = 0;
  std::string model;
  core::Bytes memory;
  int nvlink_island = -1;  // -1: no NVLink

  bool operator==(const InventoryGpu&) const = default;
};

// One GPU's latest pass, compactly: a JSON array of six numbers.
struct GpuStatus {
  observe::GpuState state = observe::GpuState::kUnknown;
  bool lendable_free = false;    // observe::MayLend(verdict, false)
  bool lendable_placed = false;  // observe::MayLend(verdict, true)
  std::optional<double> utilization_pct;
  std::optional<int64_t> memory_used_mib;
  std::optional<double> power_w;
  std::optional<double> temperature_c;
  int64_t lend_memory_mib = 0;  // observe::LendMemory: lent beside its holder, up to this
  // How much longer its quiet should last at 80 %, rounded
  // (sched::RoundQuietWindow); 0: no forecast.
  int64_t quiet_p80_s = 0;

  bool operator==(const GpuStatus&) const = default;
};

// A job of this attempt on this host: which start of the job it is matters,
// since a requeued job may run again elsewhere.
struct JobAttempt {
  sched::JobId job = 0;
  int attempt = 0;

  auto operator<=>(const JobAttempt&) const = default;
};

struct JobEvent {
  enum class Kind { kStarted, kVacating, kExited };
  int64_t seq = 0;
  JobAttempt of;
  Kind kind = Kind::kStarted;
  core::TimePoint at;
  std::string reason;                                 // vacating, or why a launch failed
  std::optional<int> pid;                             // started
  std::optional<core::TimePoint> process_started_at;  // started
  std::optional<int> exit_code;                       // exited
  std::optional<int> signal;                          // exited by a signal
  bool status_unknown = false;                        // exited while not the agent's child
  bool vacated = false;                               // exited after the agent asked it to leave
  bool launch_failed = false;                         // exited: never started (reason says why)

  bool operator==(const JobEvent&) const = default;
};

// What a GPU's card shows beyond its status: the processes on it and the
// verdict with its evidence. Sent when the GPU's state or its processes
// change, and once a minute besides (the evidence's durations grow).
// At most this many processes a GPU in a report (the most memory first):
// a report stays small whatever runs on a host, and a coordinator refuses
// more.
inline constexpr size_t kMaxProcessesPerGpu = 64;
struct GpuDetail {
  bool processes_known = false;  // false: the driver could not list them
  std::vector<observe::ObservedProcess> processes;
  observe::Verdict verdict;
  bool operator==(const GpuDetail&) const = default;
};

// A piece of a job's log the coordinator asks for (`gleaner logs` through
// it), and the agent's answer in its next report.
struct LogRequest {
  uint64_t id = 0;
  sched::JobId job = 0;
  bool err = false;  // the job's stderr, else its stdout
  uint64_t offset = 0;
  bool operator==(const LogRequest&) const = default;
};
// `gleaner keep` or `gleaner unpark` for a GPU's holder, asked of the host
// by a user the coordinator found allowed (the holder's, or root).
struct HolderRequest {
  core::GpuUuid gpu;
  observe::HolderAsk ask = observe::HolderAsk::kKeep;
  bool operator==(const HolderRequest&) const = default;
};
struct LogChunk {
  uint64_t id = 0;    // the request's
  std::string data;   // at most kMaxLogChunkBytes
  uint64_t next = 0;  // the offset after `data`
  std::string error;  // set when the log could not be read
  bool operator==(const LogChunk&) const = default;
};
inline constexpr size_t kMaxLogChunkBytes = 64 * 1024;

struct AgentReport {
  int protocol = kProtocolVersion;  // absent on the wire: 1
  std::optional<std::vector<InventoryGpu>> inventory;
  // With the inventory: the rack (or leaf switch) the host declares, for
  // gangs over several nodes; empty: none. And the CPUs and memory its
  // jobs may claim (zero: not reported, as by agents before they were).
  std::string rack;
  sched::HostResources host;
  std::vector<GpuStatus> gpus;  // in inventory order
  // Verdict reasons, by inventory position, of GPUs whose state changed
  // since the last report (the coordinator keeps the rest).
  std::vector<std::pair<int, std::string>> reasons;
  // Details, by inventory position, of GPUs whose details are due.
  std::vector<std::pair<int, GpuDetail>> details;
  std::vector<JobAttempt> running;
  std::vector<JobEvent> events;
  std::vector<observe::MinuteRollup> minutes;
  // The agent's run: a random name it takes when it starts, so that its
  // minutes, sent again after a lost answer, are stored once (empty from
  // older agents: stored as sent). At most 64 hex digits.
  std::string run;
  std::vector<LogChunk> logs;  // answers to the last reply's log requests

  bool operator==(const AgentReport&) const = default;
};

// A gang member's place among its peers: what its process is told to meet
// them (MASTER_ADDR, RANK, ...; docs/gangs.md).
struct GangRole {
  int rank = 0;                    // this host's; rank 0 is the master
  std::vector<std::string> hosts;  // every member's host, in rank order
  int gpus_per_node = 0;
  int port = 0;  // MASTER_PORT on rank 0's host

  bool operator==(const GangRole&) const = default;
};
// The most hosts one gang may span, on the wire.
inline constexpr size_t kMaxGangHosts = 4096;
// A gang's MASTER_PORT: one of 2,000 ports below Linux's ephemeral range,
// by job id, so every member computes the same without a round trip.
inline int GangPort(sched::JobId job) { return 29500 + static_cast<int>(job % 2000); }

// A job the host should start: what the executor needs.
struct JobToStart {
  JobAttempt of;
  std::string user;
  sched::JobSpec spec;
  std::vector<core::GpuUuid> gpus;
  std::optional<sched::JobId> array_id;
  int64_t array_index = 0;
  // The submitter's uid, only where the coordinator shares the agent's
  // user database (one process: `gleaner up`). Never on the wire: uids are
  // per host, so a remote agent runs the job as `user`.
  std::optional<uint32_t> uid;
  std::optional<GangRole> gang;  // one member of a gang over several nodes

  bool operator==(const JobToStart&) const = default;
};

struct Preemption {
  JobAttempt of;
  std::string reason;

  bool operator==(const Preemption&) const = default;
};

struct AgentReply {
  int64_t acked = 0;                 // events up to this seq are applied
  bool send_inventory = false;       // the coordinator does not know this host's GPUs
  std::vector<JobAttempt> assigned;  // everything the host should run; kill the rest
  std::vector<JobToStart> start;     // of those, the ones it did not report running
  std::vector<Preemption> preempt;   // leave (checkpoint signal, grace, kill)
  std::vector<Preemption> cancel;    // ended in the store (cancelled): kill now
  // After this long without a reply the coordinator requeues the host's
  // jobs: the agent stops them first, so none runs twice.
  core::Duration lease{};
  // How many times the coordinator has had new orders for this host: an
  // agent long-polls /v1/agents/wait with it and reports at once when it
  // grows. Absent (0) from coordinators before long polls.
  uint64_t orders = 0;
  std::vector<LogRequest> logs;        // pieces of logs to send at once
  std::vector<HolderRequest> holders;  // keep, unpark or give up these GPUs' holders

  bool operator==(const AgentReply&) const = default;
};

nlohmann::json ReportToJson(const AgentReport& report);
core::Result<AgentReport> ReportFromJson(const nlohmann::json& j);
nlohmann::json ReplyToJson(const AgentReply& reply);
core::Result<AgentReply> ReplyFromJson(const nlohmann::json& j);

}  // namespace gleaner::cluster
