#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "sched/action.h"
#include "sched/cluster_state.h"
#include "sched/event.h"
#include "sched/fair_share.h"
#include "sched/ordering.h"
#include "sched/pending_queue.h"
#include "sched/placement.h"
#include "sched/placement_scorer.h"
#include "sched/quota.h"
#include "sched/reservation.h"
#include "sched/scheduler_config.h"
#include "sched/victim_selector.h"
#include "sched/wait_reason.h"

namespace gleaner::sched {

enum class JobPhase {
  kUnknown,  // never submitted, or gone (finished, failed, cancelled, rejected)
  kPending,
  kRunning,
  kVacating,  // preempted: still holds its GPUs until the caller reports it gone
};

// The policies a Scheduler consults; each is a small interface with its own
// conformance tests.
struct SchedulerPolicies {
  std::unique_ptr<JobOrdering> ordering;
  std::unique_ptr<VictimSelector> victims;
  std::unique_ptr<PlacementScorer> scorer;
};

// The scheduler: the one policy the harvesting daemon and the simulator
// share. Told facts (events) with the time they happened, it answers with
// actions; it never reads a clock, does no I/O and starts no threads, so the
// same events at the same times give the same actions, in the same order.
//
// Jobs run on one node, all GPUs at once, or as a gang over several nodes
// (JobRequest::nodes), all or nothing, preferring one rack. Queue order: priority class, then
// the ordering policy (by default numeric priority, age and fair share).
// Each pass offers free lendable GPUs to pending jobs in that order, greedily
// (a job that does not fit does not hold back those behind it); a job that
// does not fit may preempt jobs of a lower class, or jobs of projects that
// borrow beyond their guarantee when its own project is within its
// guarantee, never critical or non-preemptible ones, nor any that has run
// less than `min_runtime`. Time-driven changes (aging, decayed usage,
// protections ending, reservation windows) take effect at the next Tick.
//
// Reservations pin GPUs to a project (ReservationBook). The owner's jobs
// take their reserved GPUs first; other projects' preemptible jobs borrow
// them while they are idle (after any unreserved GPU); non-preemptible jobs
// of other projects never get them. An owner's job that finds no room
// preempts the borrowers on its reserved GPUs, whatever their class and
// however briefly they have run: they knew the GPUs were lent.
//
// Errors: Handle returns InvalidArgument / NotFound / FailedPrecondition for
// events that contradict what it was told (a job id submitted twice, a
// finish for a job that is not running, an unknown GPU); its state is then
// unchanged. A job a user got wrong is not an error but a RejectJob. A
// config with an invalid reservation makes every Handle fail with that
// reason (CheckConfig says so up front).
// Thread-compatible: one caller at a time.
class Scheduler {
 public:
  // Multifactor ordering, least-work-lost victims, fragmentation-aware placement.
  explicit Scheduler(SchedulerConfig config = {});
  // Any policy left null gets its default.
  Scheduler(SchedulerConfig config, SchedulerPolicies policies);

  // What is wrong with a config, in words that say what to change.
  static core::Status CheckConfig(const SchedulerConfig& config);

  // Applies the event at `now` (times earlier than the latest seen count as
  // the latest) and returns what to do, in order.
  core::Result<std::vector<Action>> Handle(const Event& event, core::TimePoint now);

  JobPhase Phase(JobId job) const;
  // Why a pending job waits, in words. NotFound if it is not pending.
  core::Result<std::string> PendingReason(JobId job) const;
  // The node and GPUs a running or vacating job holds.
  std::optional<StartJob> Allocation(JobId job) const;
  // The GPUs an active reservation holds now, in cluster order. NotFound
  // for a name never added or ended; empty while it waits for its window.
  core::Result<std::vector<core::GpuUuid>> ReservedGpus(const std::string& name) const;

  size_t pending_count() const { return queue_.size(); }
  size_t running_count() const { return running_count_; }
  const ClusterState& cluster() const { return cluster_; }
  const QuotaBook& quotas() const { return quotas_; }
  const FairShareLedger& project_usage() const { return project_usage_; }

 private:
  struct Job {
    JobRequest req;
    JobPhase phase = JobPhase::kPending;
    core::TimePoint submitted_at;
    OrderKey key;          // while pending: as of when it was last offered GPUs, or enqueued
    int queue_group = -1;  // its group in the queue (PendingQueue::GroupOf)
    // Allowed classes, valid while the cluster has `allowed_for_classes` classes.
    std::vector<ClassId> allowed;
    size_t allowed_for_classes = 0;
    int shape_id = 0;  // jobs with one shape fit or fail alike
    WaitReason wait;
    uint64_t considered_in_pass = 0;
    int awaiting_victims = 0;
    // While running or vacating:
    NodeIndex node = 0;  // a gang's rank 0
    // All it holds: an elastic job's within its range, a gang's node by node.
    std::vector<GpuIndex> gpus;
    std::vector<GpuIndex> leaving;  // shrinking: the GPUs it gives up, held until JobResized
    core::TimePoint started_at;
    core::TimePoint charged_until;
    FairShareLedger::Handle project_account, user_account;  // set at the first Charge
    std::optional<core::TimePoint> last_checkpoint;
    bool cancelled = false;
    std::optional<JobId> beneficiary;  // vacating for this pending job
    std::string preempt_reason;
    // While awaiting victims: the reservation whose GPUs it takes back, or -1.
    int reclaiming = ReservationBook::kNone;
  };

  // A shape (with one access to reserved GPUs) that found no place in a
  // pass finds none for the rest of it: GPUs only get taken during a pass.
  struct ShapeMiss {
    uint64_t pass = 0;
    NoFit fit;
    int reserved_by = ReservationBook::kNone;
    JobId kept_for = 0;  // backfill kept the GPUs that would fit
  };

  // Backfill's promise to the first job of a pass that could not start: the
  // GPUs of the nodes it should fit on by `at`.
  // What a node will have beyond the blocked job's needs once they are
  // free: the GPUs, CPUs and memory a job running past that time may take.
  struct Spare {
    int gpus = 0;
    int64_t cpu_milli = 0;
    int64_t memory = 0;
  };
  struct Shadow {
    JobId job = 0;                      // 0: none
    OrderKey key;                       // only jobs behind it are held back
    std::optional<core::TimePoint> at;  // unset: not known (a runtime is missing)
    // The nodes it should fit on (a gang's several), each with what a job
    // running past `at` may still take there.
    std::vector<std::pair<NodeIndex, Spare>> nodes;
    // The spare of node `n`, or null when the shadow does not bind it.
    Spare* SpareOn(NodeIndex n) {
      for (auto& [node, spare] : nodes) {
        if (node == n) return &spare;
      }
      return nullptr;
    }
  };
  // When the GPUs of class `c` and the host CPUs and memory `blocked`
  // needs are free on node `n` (now, if they are), and what beyond them;
  // nullopt if never, whatever ends.
  struct NodeFree {
    std::optional<core::TimePoint> at;
    Spare spare;
  };
  std::optional<NodeFree> WhenFree(NodeIndex n, ClassId c, const JobRequest& blocked) const;
  // How the shadow binds a job: not at all, not on the shadow node's GPUs
  // that the blocked job needs (it runs past `at`), or only by ending first.
  enum class Backfill { kFree, kEndsBefore, kMustSpare };

  core::Result<std::vector<Action>> Submit(const JobRequest& req, core::TimePoint now);
  core::Status Cancel(JobId id);
  core::Status Exit(JobId id, bool succeeded, std::vector<Action>* out);
  core::Status Checkpointed(JobId id);
  core::Status Adopt(const JobRunning& e);
  core::Status Resized(JobId id);
  core::Status VerdictChanged(const GpuVerdictChanged& e, std::vector<Action>* out);
  core::Status AddNode(const NodeSpec& spec);
  core::Status LoseNode(const NodeLost& e, std::vector<Action>* out);
  void OnTick();
  core::Status StartReservation(const Reservation& r);
  core::Status EndReservation(const std::string& name);
  // Pins GPUs to reservations short of them; a pass follows if any were.
  void PinReservedGpus();

  // Offers free GPUs to pending jobs in queue order. `full` considers every
  // job; otherwise the pass stops after `event_pass_depth` misses in a row.
  void RunPass(bool full, std::vector<Action>* out);
  // Tells the scorer the workload (its jobs, waiting and running: the
  // newcomer first, then up to 20,000 in the job table's order) and the
  // classes pinned jobs oversubscribe, judged then: when a job of a new
  // shape or a new GPU class appears (at most once a second past 1,000
  // jobs), else every 5 minutes of scheduler time.
  void MaybeLearnWorkload(Job* newcomer);
  // The classes a job is pinned to, as bits of class ids below 32; all
  // bits when it asked for no model and no GPU memory.
  uint32_t PinnedMask(Job& job);
  // Tries to start one job, or to preempt for it. Returns true if it started.
  // `job.key` must be its key in the queue now (PendingQueue::KeyOf).
  bool Consider(Job& job, int* preemption_budget, std::vector<Action>* out);
  void Start(Job& job, const Placement& p, std::vector<Action>* out);
  // Where the job can start now, reservations considered. When it fits
  // nowhere only because free GPUs are reserved for others, `*reserved_by`
  // names that reservation.
  // `keep_off`, when given, refuses GPUs backfill keeps for another job.
  // Where a job may use several models, cheaper useful GPU-hours first
  // (SchedulerConfig::cost_aware).
  std::optional<Placement> Place(const JobRequest& req, const std::vector<ClassId>& allowed,
                                 int* reserved_by, const GpuFilter* keep_off) const;
  // Place among `allowed` alike, whatever their price.
  std::optional<Placement> PlaceAmong(const JobRequest& req, const std::vector<ClassId>& allowed,
                                      int* reserved_by, const GpuFilter* keep_off) const;
  // Place for one GPU count; an elastic job tries its largest that can fit first.
  std::optional<Placement> PlaceExactly(const JobRequest& req, const std::vector<ClassId>& allowed,
                                        int* reserved_by, const GpuFilter* keep_off) const;
  Backfill BackfillOf(const Job& job) const;
  // Works out the shadow for `blocked` (the first job of the pass that
  // could not start): the node where it fits soonest, or a gang's nodes.
  void PlanShadow(Job& blocked);
  // Plans the shadow for `job` if it just failed to start and is the first
  // such job in queue order.
  void MaybePlanShadow(Job& job);
  // When a running job is expected to leave its GPUs; unset: not known.
  std::optional<core::TimePoint> ExpectedEnd(const Job& job) const;
  // What reservations let a job take, which alike jobs share: their fits
  // are shared too (ShapeMisses). An owner's is its own: not shared.
  enum class ReservedAccess { kNoneActive, kMayBorrow, kMayNot, kOwner };
  ReservedAccess AccessOf(const Job& job) const;
  // Whether the job may take GPU `g`, reservations considered.
  bool MayTake(const JobRequest& req, GpuIndex g) const;
  // The reservation of `project` whose GPU `victim` holds, or -1.
  int ReservedGpuHeldFor(const Job& victim, const std::string& project) const;
  // Whether other projects' jobs hold GPUs reserved for `project` (any
  // project when empty).
  bool Lent(const std::string& project) const;
  bool TryPreempt(Job& job, std::vector<Action>* out);
  bool MayPreemptSomeone(const Job& job) const;
  // Why `victim` may be preempted for `job`, if it may.
  enum class Ground { kNone, kOutranked, kReclaim, kReservation };
  Ground PreemptionGround(const Job& job, const Job& victim) const;
  std::string DescribeGround(Ground ground, const Job& job, const Job& victim) const;
  void Preempt(Job& victim, const std::string& reason, std::optional<JobId> beneficiary,
               std::vector<Action>* out);
  // Asks an elastic job to give up `give_up` (some of its GPUs) and carry on.
  void Shrink(Job& job, const std::vector<GpuIndex>& give_up, const std::string& reason,
              std::optional<JobId> beneficiary, std::vector<Action>* out);
  // A job preempted or shrunk for another has left its GPUs.
  void VictimLeft(Job& victim);
  // The nodes a job holds GPUs on, rank 0 first: one, or a gang's.
  std::vector<NodeIndex> NodesOf(const Job& job) const;
  std::vector<NodeIndex> NodesOf(const std::vector<GpuIndex>& gpus) const;
  int64_t HeldMilli(const Job& job) const {
    return static_cast<int64_t>(job.gpus.size()) * job.req.gpu_milli;
  }
  // Frees a running or vacating job's GPUs and charges its usage.
  void Release(Job& job);
  void Requeue(Job& job, const std::string& reason, std::vector<Action>* out);
  OrderKey FreshKey(const Job& job, double project_factor, double user_factor) const;
  void Rekey();
  // What the queue asks when it keys jobs.
  PendingQueue::Factor ProjectFactor() const;
  PendingQueue::Factor UserFactor() const;
  PendingQueue::HasRoom ProjectHasRoom() const;
  void Dequeue(const Job& job);
  // Whether a job of some waiting shape would find a place now.
  bool AnyWaitingShapeFits() const;
  // Whether no job from `job` on may preempt (NoneMayPreempt), or can start
  // or preempt (NothingCanStart), in this pass.
  bool NoneMayPreempt(const Job& job, int budget, bool by_reservation) const;
  bool NothingCanStart(const Job& job, int budget, bool by_reservation) const;
  void Enqueue(Job& job);
  void Charge(Job& job, core::TimePoint until);
  const std::vector<ClassId>& Allowed(Job& job);
  int ShapeOf(const JobRequest& req);
  // Jobs alike in all a pass judges them by but their place in the queue:
  // shape, preemptibility and expected runtime (the queue's group kind).
  int LikenessOf(const JobRequest& req);
  // Whether every job behind `job` in its queue group would miss as it just
  // did in this pass, so the pass may pass them over.
  bool RestOfGroupMisses(const Job& job, int budget) const;
  // Whether no job of this shape still to come in this pass can fit, for
  // the misses the pass has seen (shape_misses_ where no reservation is
  // active).
  bool ShapeMissesForThisPass(int shape_id) const;
  // The job whose wait stands for `job`'s: itself, or the one its group was
  // passed over for in the last pass that reached it. Null: judge afresh.
  const Job* JudgedBy(const Job& job) const;
  std::string RejectionFor(const JobRequest& req);
  // Why no node could ever give the job its host CPUs or memory ("": one can).
  std::string HostRejection(const JobRequest& req) const;
  bool Evictable(const Job& job) const;
  void CountEvictable(const Job& job, int delta);

  SchedulerConfig config_;
  SchedulerPolicies policies_;
  ClusterState cluster_;
  QuotaBook quotas_;
  ReservationBook reservations_;
  ModelCosts model_costs_;
  core::Status config_error_;
  FairShareLedger project_usage_;
  FairShareLedger user_usage_;
  core::TimePoint now_{};

  std::unordered_map<JobId, Job> jobs_;
  PendingQueue queue_{nullptr};
  bool keys_stale_ = false;  // a Tick moved ages and usage since the keys were made
  // Running and vacating jobs by node index, in start order.
  std::vector<std::vector<JobId>> on_node_;
  // Nodes with evictable jobs -> how many; preemption searches only these.
  std::map<NodeIndex, int> evictable_on_node_;
  int evictable_by_rank_[3] = {0, 0, 0};
  size_t running_count_ = 0;

  std::map<FitShape, int> shapes_;  // each shape's id
  std::map<std::tuple<int, bool, int64_t>, int> likenesses_;
  // Per queue group: the last full pass that passed the rest of the group
  // over, and the job whose miss stood for them.
  struct GroupSkip {
    uint64_t pass = 0;
    JobId judged_by = 0;
  };
  std::vector<GroupSkip> group_skips_;
  uint64_t pass_ = 0;
  // What the scorer's profile has seen: (GPUs, share, CPUs, pinned mask).
  std::set<std::tuple<int, int, int64_t, uint32_t>> profile_shapes_;
  size_t classes_learned_ = 0;
  core::TimePoint learned_at_{};
  bool dirty_ = false;           // capacity grew since the last pass
  bool has_guarantees_ = false;  // some project has guaranteed GPUs to reclaim
  // The misses of each shape, shared by jobs alike in what reservations
  // let them take and what backfill holds them to.
  class ShapeMisses {
   public:
    // Null for an owner of an active reservation, whose fit is its own.
    // (Defined here: a pass asks for every job it considers.)
    ShapeMiss* Of(ReservedAccess access, Backfill backfill, int shape_id) {
      if (access == ReservedAccess::kOwner) return nullptr;
      std::vector<ShapeMiss>& row = rows_[RowOf(access, backfill)];
      const auto shape = static_cast<size_t>(shape_id);
      if (shape >= row.size()) row.resize(shape + 1);
      return &row[shape];
    }
    // Whether a job of `shape_id` missed in `pass` where no reservation is
    // active and backfill held it to `backfill`.
    bool Missed(Backfill backfill, int shape_id, uint64_t pass) const {
      const std::vector<ShapeMiss>& row = rows_[RowOf(ReservedAccess::kNoneActive, backfill)];
      const auto shape = static_cast<size_t>(shape_id);
      return shape < row.size() && row[shape].pass == pass;
    }

   private:
    // One row per access but kOwner (3) and backfill (3), by shape id.
    static size_t RowOf(ReservedAccess access, Backfill backfill) {
      return 3 * static_cast<size_t>(access) + static_cast<size_t>(backfill);
    }
    std::array<std::vector<ShapeMiss>, 9> rows_;
  };
  ShapeMisses shape_misses_;
  Shadow shadow_;
  // Jobs whose victims have all left: the next pass offers them the freed
  // GPUs before anyone else, so a borrower ahead in the queue does not take
  // what was reclaimed (and get preempted again).
  std::vector<JobId> victims_gone_;
  // The last pass that stopped before the end of the queue: jobs it did not
  // reach are judged afresh when asked why they wait.
  uint64_t early_stop_pass_ = 0;
  // Pending jobs per shape, the shapes with any, and the pass in which each
  // shape's miss was last counted: a pass stops once all have missed.
  std::vector<int64_t> queued_of_shape_;
  size_t waiting_shapes_ = 0;
  size_t pending_with_runtime_ = 0;  // pending jobs that declare an expected runtime
  std::vector<uint64_t> shape_counted_;
};

}  // namespace gleaner::sched
