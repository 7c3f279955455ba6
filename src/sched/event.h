#pragma once

#include <string>
#include <variant>

#include "core/ids.h"
#include "sched/cluster_state.h"
#include "sched/job_request.h"
#include "sched/reservation.h"

namespace gleaner::sched {

// What the scheduler is told. The caller (daemon or simulator) reports
// facts; the scheduler answers with actions. Everything a job does after
// StartJob (it ran, it left after a PreemptJob) comes back as one of these.

struct JobSubmitted {
  JobRequest job;
};
// The user cancelled: a pending job leaves the queue; a running one keeps
// its GPUs until the caller reports JobFinished or JobFailed for it.
struct JobCancelled {
  JobId job = 0;
};
// The job's process exited 0.
struct JobFinished {
  JobId job = 0;
};
// The job's process exited otherwise, or could not start. A job that was
// preempted is requeued (RequeueJob); any other failure ends it.
struct JobFailed {
  JobId job = 0;
  std::string reason;
};
// An elastic job asked to shrink (ResizeJob) runs on its smaller set now:
// the GPUs it gave up are free.
struct JobResized {
  JobId job = 0;
};
// A job that already runs on these GPUs of `node`, started before this
// scheduler was (a coordinator that just took over, a daemon restarted):
// from now on it holds them, counts for fair share and quotas, and may be
// preempted like any job the scheduler started. Add its node first.
struct JobRunning {
  JobRequest job;
  core::NodeId node;
  std::vector<core::GpuUuid> gpus;
  core::TimePoint submitted_at;
  core::TimePoint started_at;
};
// The job saved its state (it said so): preempting it now loses little.
struct JobCheckpointed {
  JobId job = 0;
};
// A GPU's idle verdict changed. A GPU that stops being lendable (its owner
// is back) is taken back at once from whatever runs on it.
struct GpuVerdictChanged {
  core::GpuUuid gpu;
  bool lendable = false;
  std::string reason;  // "owner returned: process 4242 of bob"
  // Lendable beside a quiet holder, with this much memory to lend; zero:
  // lendable whole. A job running there that declared more (or nothing)
  // is taken back.
  core::Bytes lend_memory;
  // How much longer the quiet should last at 80 % (GpuSpec::quiet_p80);
  // zero: no forecast.
  core::Duration quiet_p80{};
};
struct NodeAdded {
  NodeSpec node;
};
// The node is gone (or its agent is): its jobs are requeued.
struct NodeLost {
  core::NodeId node;
  std::string reason;
};
// A reservation begins: at once, or, when its `starts_at` lies ahead, at
// the first Tick at or after that time. A windowed one ends at the first
// Tick at or after its `ends_at`.
struct ReservationStarted {
  Reservation reservation;
};
// The reservation ends now: its GPUs are reserved no more. Jobs on them
// keep running.
struct ReservationEnded {
  std::string name;
};
// Time passed: recompute priorities and usage, start and end windowed
// reservations, run a full scheduling pass.
struct Tick {};

// Several verdicts at once (one sampling pass): all apply before the
// scheduler looks for placements, so a gang or an elastic job sees every
// GPU that became idle together, not one at a time.
struct GpuVerdictsChanged {
  std::vector<GpuVerdictChanged> changes;
};

using Event = std::variant<JobSubmitted, JobCancelled, JobFinished, JobFailed, JobResized,
                           JobRunning, JobCheckpointed, GpuVerdictChanged, GpuVerdictsChanged,
                           NodeAdded, NodeLost, ReservationStarted, ReservationEnded, Tick>;

}  // namespace gleaner::sched
