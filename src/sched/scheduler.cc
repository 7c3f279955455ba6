#include "sched/scheduler.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/format.h"
#include "sched/frag_score.h"
#include "sched/gang_placement.h"
#include "sched/placement.h"
#include "sched/preemption.h"

namespace gleaner::sched {
namespace {

std::string JobWord(JobId id) { return "job " + std::to_string(id); }

// Where a job's GPUs must be, after DescribeNeed.
std::string Where(const JobRequest& req) {
  if (req.spans_nodes()) return " on each of " + std::to_string(req.nodes) + " nodes";
  return req.gpus > 1 ? " on one node" : "";
}

std::string ProjectName(const std::string& p) { return p.empty() ? "(none)" : p; }

std::string ReservationWords(const Reservation& r) {
  return "reserved for project " + r.project + " (reservation " + r.name + ")";
}

}  // namespace

Scheduler::Scheduler(SchedulerConfig config) : Scheduler(std::move(config), SchedulerPolicies{}) {}

Scheduler::Scheduler(SchedulerConfig config, SchedulerPolicies policies)
    : config_(std::move(config)),
      policies_(std::move(policies)),
      quotas_(config_.projects, config_.default_quota),
      model_costs_(config_.cost_aware ? config_.model_price : nullptr),
      project_usage_(config_.usage_half_life),
      user_usage_(config_.usage_half_life) {
  if (!policies_.ordering)
    policies_.ordering = std::make_unique<MultifactorOrdering>(config_.weights);
  if (!policies_.victims) policies_.victims = std::make_unique<LeastWorkLostSelector>();
  if (!policies_.scorer) policies_.scorer = std::make_unique<FragmentationAwareScorer>();
  queue_ = PendingQueue(policies_.ordering.get());
  for (const auto& [name, q] : config_.projects) project_usage_.SetWeight(name, q.weight);
  for (const auto& [name, w] : config_.user_weights) user_usage_.SetWeight(name, w);
  has_guarantees_ = config_.default_quota.guaranteed_gpus > 0;
  for (const auto& [name, q] : config_.projects) has_guarantees_ |= q.guaranteed_gpus > 0;
  // Windowed ones wait for the Tick at their start; a bad one stops the
  // scheduler (every Handle says why) rather than silently reserving less.
  for (const Reservation& r : config_.reservations) {
    if (core::Status s = reservations_.Add(r, now_); !s.ok()) {
      config_error_ = s.WithContext("config.reservations");
      break;
    }
  }
}

core::Status Scheduler::CheckConfig(const SchedulerConfig& config) {
  ReservationBook book;
  for (const Reservation& r : config.reservations) {
    GLEANER_RETURN_IF_ERROR(book.Add(r, core::TimePoint{}).WithContext("config.reservations"));
  }
  return core::Status::Ok();
}

core::Result<std::vector<Action>> Scheduler::Handle(const Event& event, core::TimePoint now) {
  if (!config_error_.ok()) return config_error_;
  now_ = std::max(now_, now);
  std::vector<Action> out;
  core::Status status;
  bool full_pass = false;
  if (const auto* e = std::get_if<JobSubmitted>(&event)) {
    return Submit(e->job, now_);
  } else if (const auto* c = std::get_if<JobCancelled>(&event)) {
    status = Cancel(c->job);
  } else if (const auto* f = std::get_if<JobFinished>(&event)) {
    status = Exit(f->job, true, &out);
  } else if (const auto* x = std::get_if<JobFailed>(&event)) {
    status = Exit(x->job, false, &out);
  } else if (const auto* rz = std::get_if<JobResized>(&event)) {
    status = Resized(rz->job);
  } else if (const auto* running = std::get_if<JobRunning>(&event)) {
    status = Adopt(*running);
  } else if (const auto* k = std::get_if<JobCheckpointed>(&event)) {
    status = Checkpointed(k->job);
  } else if (const auto* batch = std::get_if<GpuVerdictsChanged>(&event)) {
    // All or none: an unknown GPU leaves the state as it was.
    for (const GpuVerdictChanged& v : batch->changes) {
      if (!cluster_.FindGpu(v.gpu)) {
        return core::NotFound("no GPU " + v.gpu.str() + " in the cluster; add its node first");
      }
    }
    for (const GpuVerdictChanged& v : batch->changes) {
      status = VerdictChanged(v, &out);
      if (!status.ok()) break;
    }
  } else if (const auto* v = std::get_if<GpuVerdictChanged>(&event)) {
    status = VerdictChanged(*v, &out);
  } else if (const auto* a = std::get_if<NodeAdded>(&event)) {
    status = AddNode(a->node);
    if (status.ok()) PinReservedGpus();
  } else if (const auto* l = std::get_if<NodeLost>(&event)) {
    status = LoseNode(*l, &out);
    if (status.ok()) PinReservedGpus();
  } else if (const auto* rs = std::get_if<ReservationStarted>(&event)) {
    status = StartReservation(rs->reservation);
  } else if (const auto* re = std::get_if<ReservationEnded>(&event)) {
    status = EndReservation(re->name);
  } else {
    // Windows open and close before the pass, so it sees them.
    if (reservations_.Advance(now_)) dirty_ = true;
    PinReservedGpus();
    OnTick();
    full_pass = true;
  }
  if (!status.ok()) return status;
  if (full_pass || dirty_) RunPass(full_pass, &out);
  return out;
}

// ---- events -------------------------------------------------------------

core::Result<std::vector<Action>> Scheduler::Submit(const JobRequest& req, core::TimePoint now) {
  if (jobs_.contains(req.id)) {
    return core::InvalidArgument(JobWord(req.id) + " was submitted already; ids are unique");
  }
  std::vector<Action> out;
  if (std::string why = RejectionFor(req); !why.empty()) {
    out.push_back(RejectJob{req.id, std::move(why)});
    return out;
  }
  Job& job = jobs_[req.id];
  job.req = req;
  if (!config_.window_aware_placement) job.req.runtime_guess = {};
  job.submitted_at = now;
  job.shape_id = ShapeOf(req);
  project_usage_.Touch(req.project);
  user_usage_.Touch(req.user);
  Enqueue(job);
  MaybeLearnWorkload(&job);
  if (dirty_) {
    RunPass(false, &out);
  } else {
    // Every job ahead of it already failed against these free GPUs: only
    // the newcomer can change anything.
    ++pass_;
    int budget = config_.preemptions_per_pass;
    if (!Consider(job, &budget, &out)) MaybePlanShadow(job);
  }
  return out;
}

std::string Scheduler::RejectionFor(const JobRequest& req) {
  if (core::Status s = ValidateRequestShape(req); !s.ok()) return s.message();
  if (const auto limit = quotas_.limit_milli(req.project); limit && req.total_milli() > *limit) {
    const ProjectQuota& q = quotas_.For(req.project);
    return "project " + ProjectName(req.project) + " may use at most " + MilliAsGpus(*limit) +
           " GPUs (" + std::to_string(q.guaranteed_gpus) + " guaranteed + " +
           std::to_string(q.borrow_limit_gpus.value_or(0)) + " borrowable); the job needs " +
           MilliAsGpus(req.total_milli());
  }
  if (cluster_.live_gpu_count() == 0) return "";  // nothing to judge by yet
  const std::vector<ClassId> allowed = AllowedClasses(cluster_, req);
  if (allowed.empty()) {
    std::set<std::string> here;
    for (ClassId c = 0; c < cluster_.class_count(); ++c) {
      const GpuClass& g = cluster_.gpu_class(c);
      if (cluster_.LargestNode(c) == 0 || g.lend_memory.count() > 0) continue;
      here.insert(g.model + " (" + MilliAsGpus(static_cast<int64_t>(g.memory.ToGiB() * 1000)) +
                  " GiB)");
    }
    std::string list;
    for (const std::string& h : here) list += (list.empty() ? "" : ", ") + h;
    return "no GPU here matches: needs " + DescribeNeed(req) + "; GPUs here: " + list;
  }
  if (std::string host = HostRejection(req); !host.empty()) return host;
  if (req.spans_nodes()) return GangRejection(cluster_, req, allowed);
  int largest = 0;
  for (ClassId c : allowed) largest = std::max(largest, cluster_.LargestNode(c));
  if (req.gpus > largest) {
    return "needs " + DescribeNeed(req) + " on one node; the largest node here has " +
           std::to_string(largest) + " such GPUs; a job may span nodes as a gang (nodes)";
  }
  return "";
}

std::string Scheduler::HostRejection(const JobRequest& req) const {
  if (!req.asks_host()) return "";
  const HostResources largest = cluster_.LargestHost();
  if (req.cpu_milli > 0 && largest.cpu_milli > 0 && req.cpu_milli > largest.cpu_milli) {
    return "asks " + CpusText(req.cpu_milli) + " on one node; the largest node here has " +
           CpusText(largest.cpu_milli);
  }
  if (req.memory.count() > 0 && largest.memory.count() > 0 && req.memory > largest.memory) {
    return "asks " + core::FormatBytes(req.memory) +
           " of memory on one node; the largest node here has " + core::FormatBytes(largest.memory);
  }
  return "";
}

core::Status Scheduler::Cancel(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return core::NotFound("no " + JobWord(id) + " to cancel");
  Job& job = it->second;
  if (job.phase == JobPhase::kPending) {
    Dequeue(job);
    jobs_.erase(it);
  } else {
    job.cancelled = true;  // it leaves when the caller reports its exit
  }
  return core::Status::Ok();
}

core::Status Scheduler::Exit(JobId id, bool succeeded, std::vector<Action>* out) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.phase == JobPhase::kPending) {
    return core::FailedPrecondition(JobWord(id) + " is not running; only a started job can end");
  }
  Job& job = it->second;
  const bool was_preempted = job.phase == JobPhase::kVacating;
  Release(job);
  if (was_preempted && !succeeded && !job.cancelled) {
    Requeue(job, job.preempt_reason, out);
  } else {
    jobs_.erase(it);
  }
  return core::Status::Ok();
}

core::Status Scheduler::Adopt(const JobRunning& e) {
  const JobRequest& req = e.job;
  if (jobs_.contains(req.id)) {
    return core::InvalidArgument(JobWord(req.id) + " is known already; ids are unique");
  }
  GLEANER_RETURN_IF_ERROR(ValidateRequestShape(req));
  const auto n = cluster_.FindNode(e.node);
  if (!n) return core::NotFound("no node " + e.node.str() + " in the cluster; add it first");
  if (e.gpus.empty()) return core::InvalidArgument(JobWord(req.id) + " runs on no GPU");
  // All or none: a GPU it cannot hold leaves the state as it was.
  std::vector<GpuIndex> gpus;
  for (const core::GpuUuid& uuid : e.gpus) {
    const auto g = cluster_.FindGpu(uuid);
    // A gang's GPUs lie on several nodes; any other job's on its one.
    if (!g || (!req.spans_nodes() && cluster_.gpu(*g).node != *n) ||
        !cluster_.node(cluster_.gpu(*g).node).alive) {
      return core::NotFound("no GPU " + uuid.str() + " on node " + e.node.str());
    }
    if (std::find(gpus.begin(), gpus.end(), *g) != gpus.end() ||
        cluster_.gpu(*g).free_milli < req.gpu_milli) {
      return core::FailedPrecondition("GPU " + uuid.str() + " has no room for " + JobWord(req.id) +
                                      ": other jobs hold it");
    }
    gpus.push_back(*g);
  }
  Job& job = jobs_[req.id];
  job.req = req;
  job.submitted_at = e.submitted_at;
  job.shape_id = ShapeOf(req);
  project_usage_.Touch(req.project);
  user_usage_.Touch(req.user);
  job.phase = JobPhase::kRunning;
  job.node = cluster_.gpu(gpus.front()).node;
  job.gpus = std::move(gpus);
  job.started_at = e.started_at;
  job.charged_until = now_;  // what it used before is not known here
  for (GpuIndex g : job.gpus) cluster_.Take(g, req.gpu_milli);
  for (NodeIndex m : NodesOf(job)) {
    on_node_[m].push_back(req.id);
    cluster_.TakeHost(m, req);
  }
  quotas_.Add(req.project, HeldMilli(job));
  ++running_count_;
  CountEvictable(job, +1);
  dirty_ = true;
  return core::Status::Ok();
}

core::Status Scheduler::Checkpointed(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.phase == JobPhase::kPending) {
    return core::FailedPrecondition(JobWord(id) +
                                    " is not running; only a running job checkpoints");
  }
  it->second.last_checkpoint = now_;
  return core::Status::Ok();
}

core::Status Scheduler::Resized(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.phase != JobPhase::kRunning || it->second.leaving.empty()) {
    return core::FailedPrecondition(JobWord(id) +
                                    " was not asked to shrink; only a ResizeJob is answered so");
  }
  Job& job = it->second;
  Charge(job, now_);
  for (GpuIndex g : job.leaving) {
    cluster_.Give(g, job.req.gpu_milli);
    job.gpus.erase(std::find(job.gpus.begin(), job.gpus.end(), g));
  }
  quotas_.Remove(job.req.project, static_cast<int64_t>(job.leaving.size()) * job.req.gpu_milli);
  job.leaving.clear();
  // It restarted: protection and lost work count from now.
  job.started_at = now_;
  job.last_checkpoint.reset();
  VictimLeft(job);
  CountEvictable(job, +1);
  dirty_ = true;
  return core::Status::Ok();
}

core::Status Scheduler::VerdictChanged(const GpuVerdictChanged& e, std::vector<Action>* out) {
  const auto g = cluster_.FindGpu(e.gpu);
  if (!g) return core::NotFound("no GPU " + e.gpu.str() + " in the cluster; add its node first");
  cluster_.SetLendable(*g, e.lendable, e.lend_memory);
  cluster_.SetQuietWindow(*g, e.quiet_p80);
  if (e.lendable) {
    dirty_ = true;
    if (e.lend_memory.count() == 0) return core::Status::Ok();  // lent whole: anything fits
  }
  const GpuState& gpu = cluster_.gpu(*g);
  // Still lendable, it is taken back only from a job that no longer fits
  // beside its holder.
  const auto fits = [&](const Job& job) {
    return e.lend_memory.count() == 0 ||
           (job.req.gpu_memory.count() > 0 && job.req.gpu_memory <= e.lend_memory);
  };
  const std::string reason =
      gpu.spec.uuid.str() + " (" + cluster_.node(gpu.node).id.str() + " gpu " +
      std::to_string(gpu.spec.index) + ")" +
      (e.lendable ? " lends only " + core::FormatBytes(e.lend_memory) + " beside its holder"
                  : " is no longer lendable") +
      (e.reason.empty() ? "" : ": " + e.reason);
  // The owner never waits: whatever runs there leaves, protected or not.
  const std::vector<JobId> here = on_node_[gpu.node];
  for (JobId id : here) {
    Job& job = jobs_.at(id);
    if (job.phase != JobPhase::kRunning) continue;
    if (std::find(job.gpus.begin(), job.gpus.end(), *g) == job.gpus.end()) continue;
    if (std::find(job.leaving.begin(), job.leaving.end(), *g) != job.leaving.end()) continue;
    if (e.lendable && fits(job)) continue;
    // An elastic job that can restart smaller keeps its other GPUs, if
    // they are enough for it.
    std::vector<GpuIndex> give_up;
    for (GpuIndex h : job.gpus) {
      if (!cluster_.gpu(h).spec.lendable || h == *g) give_up.push_back(h);
    }
    const int keep = static_cast<int>(job.gpus.size() - give_up.size());
    if (job.req.can_shrink && job.leaving.empty() && keep >= job.req.gpus) {
      Shrink(job, give_up, reason, std::nullopt, out);
    } else {
      Preempt(job, reason, std::nullopt, out);
    }
  }
  return core::Status::Ok();
}

core::Status Scheduler::AddNode(const NodeSpec& spec) {
  GLEANER_RETURN_IF_ERROR(cluster_.AddNode(spec));
  on_node_.resize(cluster_.node_count());
  dirty_ = true;
  return core::Status::Ok();
}

core::Status Scheduler::LoseNode(const NodeLost& e, std::vector<Action>* out) {
  const auto n = cluster_.FindNode(e.node);
  if (!n) return core::NotFound("no node " + e.node.str() + " in the cluster");
  const std::string reason =
      "node " + e.node.str() + " lost" + (e.reason.empty() ? "" : ": " + e.reason);
  const std::vector<JobId> here = on_node_[*n];
  for (JobId id : here) {
    Job& job = jobs_.at(id);
    Release(job);
    if (job.cancelled) {
      jobs_.erase(id);
    } else {
      Requeue(job, reason, out);
    }
  }
  reservations_.ForgetNode(cluster_, *n);
  return cluster_.RemoveNode(e.node).status();
}

core::Status Scheduler::StartReservation(const Reservation& r) {
  GLEANER_RETURN_IF_ERROR(reservations_.Add(r, now_));
  PinReservedGpus();
  // Owners' pending jobs may now take their GPUs back.
  dirty_ = true;
  return core::Status::Ok();
}

core::Status Scheduler::EndReservation(const std::string& name) {
  GLEANER_RETURN_IF_ERROR(reservations_.End(name));
  dirty_ = true;  // jobs kept off its GPUs may take them now
  return core::Status::Ok();
}

void Scheduler::PinReservedGpus() {
  if (!reservations_.short_of_gpus()) return;
  const auto standing = [&](GpuIndex g, const std::string& owner) {
    const GpuState& gpu = cluster_.gpu(g);
    if (gpu.free_milli == kMilliPerGpu) return GpuStanding::kFree;
    for (JobId id : on_node_[gpu.node]) {
      const Job& job = jobs_.at(id);
      if (std::find(job.gpus.begin(), job.gpus.end(), g) == job.gpus.end()) continue;
      if (job.req.project != owner && !job.req.may_be_preempted()) {
        return GpuStanding::kUnavailable;
      }
    }
    return GpuStanding::kReclaimable;
  };
  if (reservations_.TopUp(cluster_, standing)) dirty_ = true;
}

void Scheduler::OnTick() {
  project_usage_.Advance(now_);
  user_usage_.Advance(now_);
  for (const std::vector<JobId>& ids : on_node_) {
    for (JobId id : ids) Charge(jobs_.at(id), now_);
  }
  // Ages and usage moved: every pending job needs a fresh key, given before
  // the next pass that may act on the order. Passes that can start or
  // preempt nothing (the common case on a full cluster) skip it.
  keys_stale_ = true;
}

void Scheduler::Rekey() {
  keys_stale_ = false;
  // A project without room could start nothing: its jobs are keyed when it
  // has room again (KeyProjectsWithRoom, before each pass).
  queue_.Rekey(now_, ProjectFactor(), UserFactor(), ProjectHasRoom());
}

PendingQueue::Factor Scheduler::ProjectFactor() const {
  return [this](const std::string& project) { return project_usage_.Factor(project); };
}

PendingQueue::Factor Scheduler::UserFactor() const {
  return [this](const std::string& user) { return user_usage_.Factor(user); };
}

PendingQueue::HasRoom Scheduler::ProjectHasRoom() const {
  return [this](const std::string& project) { return quotas_.Admits(project, 1); };
}

bool Scheduler::NoneMayPreempt(const Job& job, int budget, bool by_reservation) const {
  // The queue is in class order, so once no job of this class may preempt
  // by class, none after it may either.
  const int rank = ClassRank(job.req.priority_class);
  bool by_class = false;
  for (int r = rank + 1; r < 3; ++r) by_class = by_class || evictable_by_rank_[r] > 0;
  const bool by_reclaim = has_guarantees_ && quotas_.borrowing_projects() > 0;
  return budget == 0 || (!by_class && !by_reclaim && !by_reservation);
}

bool Scheduler::AnyWaitingShapeFits() const {
  for (const auto& [shape, id] : shapes_) {
    if (static_cast<size_t>(id) >= queued_of_shape_.size() ||
        queued_of_shape_[static_cast<size_t>(id)] == 0) {
      continue;
    }
    JobRequest req;
    std::tie(req.gpus, req.max_gpus, req.gpu_milli, std::ignore, req.gpu_models, std::ignore,
             req.nodes, req.one_rack, req.cpu_milli, std::ignore) = shape;
    req.min_gpu_memory = core::Bytes(std::get<3>(shape));
    req.gpu_memory = core::Bytes(std::get<5>(shape));
    req.memory = core::Bytes(std::get<9>(shape));
    int reserved_by = ReservationBook::kNone;
    if (Place(req, AllowedClasses(cluster_, req), &reserved_by, nullptr)) return true;
  }
  return false;
}

bool Scheduler::NothingCanStart(const Job& job, int budget, bool by_reservation) const {
  return cluster_.free_milli() == 0 && NoneMayPreempt(job, budget, by_reservation);
}

// ---- the pass -----------------------------------------------------------

void Scheduler::MaybeLearnWorkload(Job* newcomer) {
  if (!policies_.scorer->LearnsWorkload()) return;
  // What the profile reads of a job; a new one is learned before it is
  // placed, at most once a second of scheduler time on a queue large
  // enough for learning to cost (learning reads up to kLearnedJobs).
  constexpr core::Duration kRelearnEvery = std::chrono::minutes(5);
  constexpr core::Duration kNewShapeAtMost = std::chrono::seconds(1);
  constexpr size_t kLearnedJobs = 20'000;
  constexpr size_t kFewJobs = 1'000;
  constexpr size_t kRememberedShapes = 1 << 16;  // bounded whatever users submit
  bool new_shape = cluster_.class_count() != classes_learned_;
  if (newcomer != nullptr) {
    if (profile_shapes_.size() >= kRememberedShapes) profile_shapes_.clear();
    new_shape |= profile_shapes_
                     .insert({newcomer->req.gpus, newcomer->req.gpu_milli, newcomer->req.cpu_milli,
                              PinnedMask(*newcomer)})
                     .second;
  }
  const core::Duration since = now_ - learned_at_;
  if (!(since >= kRelearnEvery ||
        (new_shape && (jobs_.size() <= kFewJobs || since >= kNewShapeAtMost)))) {
    return;
  }
  learned_at_ = now_;
  classes_learned_ = cluster_.class_count();
  std::vector<FragPod> pods;
  pods.reserve(std::min(jobs_.size(), kLearnedJobs));
  const auto add = [&](Job& job) {
    FragPod p;
    p.cpu_milli = job.req.cpu_milli;
    p.num_gpu = job.req.gpus;
    p.gpu_milli = job.req.gpu_milli;
    p.model_mask = PinnedMask(job);
    pods.push_back(p);
  };
  if (newcomer != nullptr) add(*newcomer);
  for (auto& [id, job] : jobs_) {
    if (pods.size() >= kLearnedJobs) break;
    if (job.phase != JobPhase::kUnknown && &job != newcomer) add(job);
  }
  // Classes of GPUs shared with a holder count as absent: only jobs that
  // declared their memory may use them, so they say nothing of a pin.
  const size_t classes = std::min<size_t>(cluster_.class_count(), 32);
  std::vector<int64_t> gpus(classes, 0);
  std::vector<int64_t> free(classes, 0);
  for (NodeIndex n = 0; n < cluster_.node_count(); ++n) {
    if (!cluster_.node(n).alive) continue;
    for (GpuIndex g : cluster_.node(n).gpus) {
      const GpuState& gpu = cluster_.gpu(g);
      if (gpu.gpu_class >= classes || cluster_.gpu_class(gpu.gpu_class).lend_memory.count() > 0) {
        continue;
      }
      ++gpus[gpu.gpu_class];
      if (gpu.spec.lendable) free[gpu.gpu_class] += gpu.free_milli;
    }
  }
  const WorkloadProfile profile = ProfileWorkload(pods, gpus);
  policies_.scorer->Learn(profile, OversubscribedModels(profile, free));
}

uint32_t Scheduler::PinnedMask(Job& job) {
  // Pinned only by what the job asked: a model or a memory size. (Which
  // classes it may use also depends on lending, which pins nothing.)
  if (job.req.gpu_models.empty() && job.req.min_gpu_memory.count() == 0) return ~0u;
  uint32_t mask = 0;
  for (ClassId c : Allowed(job)) mask |= c < 32 ? 1u << c : 0u;
  return mask;
}

void Scheduler::RunPass(bool full, std::vector<Action>* out) {
  dirty_ = false;
  ++pass_;
  MaybeLearnWorkload(nullptr);
  int budget = config_.preemptions_per_pass;
  int misses = 0;
  std::vector<JobId> first;
  first.swap(victims_gone_);
  for (JobId id : first) {
    auto j = jobs_.find(id);
    if (j == jobs_.end() || j->second.phase != JobPhase::kPending) continue;
    Job& job = j->second;
    job.key = queue_.KeyOf(job.queue_group, job.req, job.submitted_at, job.key);
    Consider(job, &budget, out);
  }
  queue_.KeyProjectsWithRoom(ProjectFactor(), UserFactor(), ProjectHasRoom());
  // A gang keeps what it holds from pass to pass (a short pass after an
  // event may not reach it); any other shadow is planned afresh.
  if (const auto holder = jobs_.find(shadow_.job); holder == jobs_.end() ||
                                                   holder->second.phase != JobPhase::kPending ||
                                                   !holder->second.req.spans_nodes()) {
    shadow_ = {};
  }
  // Borrowers on reserved GPUs can be reclaimed whatever the class; the
  // pass never makes more of them, so this holds for the whole pass.
  const bool by_reservation = reservations_.any_active() && Lent("");
  // Stale keys matter only to a pass that may start or preempt something:
  // the first job's class, all the stops below look at, never changes, and
  // where no waiting shape fits, the pass ends once each has missed.
  if (const std::optional<OrderKey> front = keys_stale_ ? queue_.Front() : std::nullopt) {
    const Job& first_job = jobs_.at(front->id);
    if (!NoneMayPreempt(first_job, budget, by_reservation) ||
        (cluster_.free_milli() > 0 && (reservations_.any_active() || AnyWaitingShapeFits()))) {
      Rekey();
    }
  }
  // Without reservations every job's fit is judged by its shape and how
  // the backfill shadow binds it (ShapeMissesForThisPass): once every shape
  // waiting has found no place, nobody further back can start either.
  const bool by_shape = !reservations_.any_active();
  size_t shapes_missed = 0;
  PendingQueue::Walk walk(queue_);
  while (const std::optional<OrderKey> key = walk.Next()) {
    Job& job = jobs_.at(key->id);                   // Consider may take it out of the queue
    if (job.considered_in_pass == pass_) continue;  // offered first, above
    job.key = *key;                                 // its key in the queue now, which Dequeue needs
    if (NothingCanStart(job, budget, by_reservation)) {
      early_stop_pass_ = pass_;  // this job and those after it were not considered
      break;
    }
    if (Consider(job, &budget, out)) {
      misses = 0;
      continue;
    }
    // Before the pass may stop: a newcomer after it meets the shadow.
    MaybePlanShadow(job);
    if (by_shape && ShapeMissesForThisPass(job.shape_id)) {
      const auto shape = static_cast<size_t>(job.shape_id);
      if (shape_counted_.size() <= shape) shape_counted_.resize(shape + 1, 0);
      if (shape_counted_[shape] != pass_) {
        shape_counted_[shape] = pass_;
        if (++shapes_missed == waiting_shapes_ && NoneMayPreempt(job, budget, by_reservation)) {
          early_stop_pass_ = pass_;
          break;
        }
      }
    }
    if (!full && ++misses >= config_.event_pass_depth) {
      early_stop_pass_ = pass_;
      break;
    }
    // A pass costs a visit per group of alike jobs that miss, not per job:
    // the rest of the group would miss alike (and counts as no more misses).
    // A project with no room at all misses with every job it has.
    if (job.wait.kind == WaitReason::Kind::kQuota && !quotas_.Admits(job.req.project, 1)) {
      walk.SkipRestOfProject();
    } else if (RestOfGroupMisses(job, budget) && walk.SkipRestOfGroup()) {
      const auto g = static_cast<size_t>(job.queue_group);
      if (group_skips_.size() <= g) group_skips_.resize(g + 1);
      group_skips_[g] = {pass_, job.req.id};
    }
  }
}

bool Scheduler::ShapeMissesForThisPass(int shape_id) const {
  const auto shape = static_cast<size_t>(shape_id);
  const auto missed = [&](Backfill b) {
    const std::vector<ShapeMiss>& row = shape_misses_[3 * static_cast<size_t>(b)];
    return shape < row.size() && row[shape].pass == pass_;
  };
  // Unbound (kFree, kEndsBefore) is the least a job is held to, and a pass
  // only takes GPUs: a miss there stays one for every later job of the
  // shape. A miss while bound to spare the shadow's GPUs holds for every
  // later job too when none has an expected runtime (all are bound so, the
  // shadow's job sorting first).
  return missed(Backfill::kFree) || missed(Backfill::kEndsBefore) ||
         (pending_with_runtime_ == 0 && missed(Backfill::kMustSpare));
}

bool Scheduler::RestOfGroupMisses(const Job& job, int budget) const {
  // The group shares the shape, class, project and what reservations and
  // backfill look at, and a pass only ever takes GPUs: a miss stays a miss.
  // Only a preemption could go differently for the next job.
  return job.awaiting_victims == 0 && (budget == 0 || !MayPreemptSomeone(job));
}

bool Scheduler::Consider(Job& job, int* preemption_budget, std::vector<Action>* out) {
  job.considered_in_pass = pass_;
  if (cluster_.live_gpu_count() == 0) {
    job.wait = {WaitReason::Kind::kNoNodes, {}, 0, 0, 0};
    return false;
  }
  const JobRequest& req = job.req;
  if (!quotas_.Admits(req.project, req.total_milli())) {
    job.wait = {WaitReason::Kind::kQuota,
                {},
                quotas_.used_milli(req.project),
                quotas_.limit_milli(req.project).value_or(0),
                0};
    return false;
  }
  const std::vector<ClassId>& allowed = Allowed(job);
  const auto shape = static_cast<size_t>(job.shape_id);
  const int access = ReservedAccess(job);
  const Backfill backfill = BackfillOf(job);
  ShapeMiss fresh;
  ShapeMiss* miss = &fresh;  // owners' fits are not shared
  if (access >= 0) {
    auto& misses = shape_misses_[static_cast<size_t>(access + 3 * static_cast<int>(backfill))];
    if (shape >= misses.size()) misses.resize(shape + 1);
    miss = &misses[shape];
  }
  if (miss->pass != pass_ || access < 0) {
    int reserved_by = ReservationBook::kNone;
    JobId kept_for = 0;
    if (cluster_.free_milli() > 0) {
      // The blocked job's GPUs, CPUs and memory on the nodes it waits for.
      const GpuFilter keep_off = [&](GpuIndex g) {
        const NodeIndex n = cluster_.gpu(g).node;
        const Spare* spare = shadow_.SpareOn(n);
        return spare == nullptr ||
               (req.gpus <= spare->gpus &&
                HostFits(cluster_.node(n).capacity, spare->cpu_milli, spare->memory, req));
      };
      const bool bound = backfill == Backfill::kMustSpare;
      if (auto p = Place(req, allowed, &reserved_by, bound ? &keep_off : nullptr)) {
        if (bound) {
          for (GpuIndex g : p->gpus) {
            if (Spare* spare = shadow_.SpareOn(cluster_.gpu(g).node)) --spare->gpus;
          }
          for (NodeIndex n : NodesOf(p->gpus)) {
            if (Spare* spare = shadow_.SpareOn(n)) {
              spare->cpu_milli -= req.cpu_milli;
              spare->memory -= static_cast<int64_t>(req.memory.count());
            }
          }
        }
        Start(job, *p, out);
        return true;
      }
      // Would it fit but for backfill? Then that is why it waits.
      int ignored = ReservationBook::kNone;
      if (bound && Place(req, allowed, &ignored, nullptr)) kept_for = shadow_.job;
    }
    *miss = {pass_, DescribeNoFit(cluster_, req, allowed), reserved_by, kept_for};
  }
  if (job.awaiting_victims > 0) {
    job.wait = {WaitReason::Kind::kAwaitingVictims, {}, 0, 0, job.awaiting_victims};
    return false;
  }
  job.wait = {WaitReason::Kind::kNoFit,
              miss->fit,
              0,
              0,
              0,
              miss->reserved_by,
              miss->kept_for,
              miss->kept_for != 0 ? shadow_.at : std::nullopt};
  if (*preemption_budget > 0 && MayPreemptSomeone(job)) {
    --*preemption_budget;
    TryPreempt(job, out);
  }
  return false;
}

int Scheduler::ReservedAccess(const Job& job) const {
  if (!reservations_.any_active()) return 0;
  if (reservations_.OwnsActive(job.req.project)) return -1;
  return job.req.may_be_preempted() ? 1 : 2;
}

bool Scheduler::MayTake(const JobRequest& req, GpuIndex g) const {
  const int s = reservations_.HolderOf(g);
  return s == ReservationBook::kNone || reservations_.reservation(s).project == req.project ||
         req.may_be_preempted();
}

std::optional<Placement> Scheduler::Place(const JobRequest& req,
                                          const std::vector<ClassId>& allowed, int* reserved_by,
                                          const GpuFilter* keep_off) const {
  if (allowed.size() > 1) {
    const std::vector<std::vector<ClassId>> tiers = model_costs_.Tiers(cluster_, allowed);
    for (const std::vector<ClassId>& tier : tiers) {
      if (auto p = PlaceAmong(req, tier, reserved_by, keep_off)) return p;
    }
    if (!tiers.empty()) return std::nullopt;
  }
  return PlaceAmong(req, allowed, reserved_by, keep_off);
}

std::optional<Placement> Scheduler::PlaceAmong(const JobRequest& req,
                                               const std::vector<ClassId>& allowed,
                                               int* reserved_by, const GpuFilter* keep_off) const {
  if (!req.elastic()) return PlaceExactly(req, allowed, reserved_by, keep_off);
  // As many as fit within the range: the largest free set bounds it, and
  // so does what the project may still take.
  int most = req.max_gpus;
  int largest = 0;
  for (ClassId c : allowed) largest = std::max(largest, cluster_.LargestFree(c));
  most = std::min(most, largest);
  if (const auto limit = quotas_.limit_milli(req.project)) {
    most = static_cast<int>(
        std::min<int64_t>(most, (*limit - quotas_.used_milli(req.project)) / req.gpu_milli));
  }
  JobRequest sized = req;
  sized.max_gpus = 0;
  for (int count = most; count >= req.gpus; --count) {
    sized.gpus = count;
    if (auto p = PlaceExactly(sized, allowed, reserved_by, keep_off)) return p;
  }
  if (most < req.gpus) {
    sized.gpus = req.gpus;
    return PlaceExactly(sized, allowed, reserved_by, keep_off);  // says which reservation, if one
  }
  return std::nullopt;
}

std::optional<Placement> Scheduler::PlaceExactly(const JobRequest& req,
                                                 const std::vector<ClassId>& allowed,
                                                 int* reserved_by,
                                                 const GpuFilter* keep_off) const {
  const PlacementScorer& scorer = *policies_.scorer;
  const int limit = config_.placement_candidates;
  if (req.spans_nodes()) {
    // A gang borrows reserved GPUs as any job of its kind may, but takes
    // none of them first: its own reserved GPUs rarely span its nodes.
    if (!reservations_.any_active()) return FindGangPlacement(cluster_, req, allowed, keep_off);
    const GpuFilter may = [&](GpuIndex g) {
      return MayTake(req, g) && (keep_off == nullptr || (*keep_off)(g));
    };
    return FindGangPlacement(cluster_, req, allowed, &may);
  }
  if (!reservations_.any_active()) {
    return FindPlacement(cluster_, req, allowed, scorer, limit, keep_off);
  }
  const auto and_not_kept = [keep_off](const GpuFilter& f) -> GpuFilter {
    if (!keep_off) return f;
    return [keep_off, &f](GpuIndex g) { return (*keep_off)(g) && f(g); };
  };
  const auto owner_of = [&](GpuIndex g) -> const std::string* {
    const int s = reservations_.HolderOf(g);
    return s == ReservationBook::kNone ? nullptr : &reservations_.reservation(s).project;
  };
  // The owner's own reserved GPUs first: that is what they are for.
  if (reservations_.OwnsActive(req.project)) {
    std::vector<NodeIndex> nodes;
    for (int s : reservations_.Active()) {
      if (reservations_.reservation(s).project != req.project) continue;
      for (GpuIndex g : reservations_.gpus(s)) nodes.push_back(cluster_.gpu(g).node);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    const GpuFilter own = [&](GpuIndex g) {
      const std::string* owner = owner_of(g);
      return owner && *owner == req.project;
    };
    if (auto p = FindPlacementOnNodes(cluster_, req, allowed, scorer, nodes, and_not_kept(own))) {
      return p;
    }
  }
  // Then unreserved GPUs (with the owner's own): a borrower there is never
  // reclaimed for a reservation.
  const GpuFilter unreserved = [&](GpuIndex g) {
    const std::string* owner = owner_of(g);
    return !owner || *owner == req.project;
  };
  const GpuFilter unreserved_not_kept = and_not_kept(unreserved);
  if (auto p = FindPlacement(cluster_, req, allowed, scorer, limit, &unreserved_not_kept)) return p;
  // Anything, others' reserved GPUs included: for preemptible jobs a loan,
  // for the others only to say which reservation keeps them waiting.
  auto p = FindPlacement(cluster_, req, allowed, scorer, limit, keep_off);
  if (!p || req.may_be_preempted()) return p;
  for (GpuIndex g : p->gpus) {
    const int s = reservations_.HolderOf(g);
    if (s != ReservationBook::kNone && reservations_.reservation(s).project != req.project) {
      *reserved_by = s;
      break;
    }
  }
  return std::nullopt;
}

Scheduler::Backfill Scheduler::BackfillOf(const Job& job) const {
  if (shadow_.job == 0 || shadow_.job == job.req.id || job.key < shadow_.key) {
    return Backfill::kFree;
  }
  const auto blocked = jobs_.find(shadow_.job);
  if (blocked == jobs_.end() || blocked->second.phase != JobPhase::kPending) return Backfill::kFree;
  if (job.req.expected_runtime &&
      (!shadow_.at || now_ + *job.req.expected_runtime <= *shadow_.at)) {
    return Backfill::kEndsBefore;
  }
  return Backfill::kMustSpare;
}

std::optional<core::TimePoint> Scheduler::ExpectedEnd(const Job& job) const {
  if (job.phase == JobPhase::kVacating) return now_;  // on its way out
  if (!job.req.expected_runtime) return std::nullopt;
  const core::TimePoint end = job.started_at + *job.req.expected_runtime;
  // One that overran its estimate could run on for any time.
  if (end < now_) return std::nullopt;
  return end;
}

void Scheduler::MaybePlanShadow(Job& job) {
  if ((!config_.backfill && !job.req.spans_nodes()) || job.phase != JobPhase::kPending ||
      job.wait.kind != WaitReason::Kind::kNoFit || job.wait.kept_for != 0 ||
      job.awaiting_victims > 0 || job.req.fractional()) {
    return;
  }
  // A newcomer that sorts before the job holding the shadow takes it over.
  // A gang holding the shadow gathers the nodes that drained since.
  if (BackfillOf(job) != Backfill::kFree || (shadow_.job == job.req.id && !job.req.spans_nodes())) {
    return;
  }
  if (shadow_.job != 0 && shadow_.job != job.req.id && !(job.key < shadow_.key)) {
    const auto holder = jobs_.find(shadow_.job);
    if (holder != jobs_.end() && holder->second.phase == JobPhase::kPending) return;
  }
  PlanShadow(job);
}

std::optional<Scheduler::NodeFree> Scheduler::WhenFree(NodeIndex n, ClassId c,
                                                       const JobRequest& blocked) const {
  const int need = blocked.gpus;
  const NodeState& node = cluster_.node(n);
  int have = cluster_.FreeWhole(n, c);
  int64_t cpu = node.free_cpu_milli;
  int64_t memory = node.free_memory;
  const auto spare = [&] {
    return Spare{have - need, cpu - blocked.cpu_milli,
                 memory - static_cast<int64_t>(blocked.memory.count())};
  };
  const auto fits = [&] { return have >= need && HostFits(node.capacity, cpu, memory, blocked); };
  if (fits()) return NodeFree{now_, spare()};
  // Running jobs by expected end, unknown ends last.
  std::vector<std::pair<std::optional<core::TimePoint>, JobId>> ends;
  for (JobId id : on_node_[n]) ends.emplace_back(ExpectedEnd(jobs_.at(id)), id);
  std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) {
    if (a.first.has_value() != b.first.has_value()) return a.first.has_value();
    return a.first == b.first ? a.second < b.second : *a.first < *b.first;
  });
  // A shared GPU is free only when its last job leaves.
  std::map<GpuIndex, int> free_milli;
  for (const auto& [end, id] : ends) {
    const Job& j = jobs_.at(id);
    for (GpuIndex g : j.gpus) {
      const GpuState& gpu = cluster_.gpu(g);
      if (gpu.node != n || gpu.gpu_class != c || !gpu.spec.lendable) continue;
      auto [it, added] = free_milli.try_emplace(g, gpu.free_milli);
      it->second += j.req.gpu_milli;
      if (it->second == kMilliPerGpu) ++have;
    }
    cpu += j.req.cpu_milli;
    memory += static_cast<int64_t>(j.req.memory.count());
    if (fits()) return NodeFree{end, spare()};
  }
  return std::nullopt;
}

void Scheduler::PlanShadow(Job& blocked) {
  const auto needed = static_cast<size_t>(blocked.req.nodes);
  // Sooner first: known times before unknown, then earlier; ties to the
  // lower node.
  const auto sooner = [](const std::pair<NodeFree, NodeIndex>& a,
                         const std::pair<NodeFree, NodeIndex>& b) {
    if (a.first.at.has_value() != b.first.at.has_value()) return a.first.at.has_value();
    return a.first.at == b.first.at ? a.second < b.second : *a.first.at < *b.first.at;
  };
  std::optional<Shadow> best;
  for (ClassId c : Allowed(blocked)) {
    std::vector<std::pair<NodeFree, NodeIndex>> nodes;
    for (NodeIndex n = 0; n < cluster_.node_count(); ++n) {
      if (!cluster_.node(n).alive) continue;
      // One node: a job that fits one now is kept off by something else.
      if (needed == 1 && (on_node_[n].empty() || (cluster_.FreeWhole(n, c) >= blocked.req.gpus &&
                                                  cluster_.HasHostRoom(n, blocked.req)))) {
        continue;
      }
      if (auto when = WhenFree(n, c, blocked.req)) nodes.emplace_back(*when, n);
    }
    if (nodes.size() < needed) continue;
    std::partial_sort(nodes.begin(), nodes.begin() + static_cast<long>(needed), nodes.end(),
                      sooner);
    Shadow here{blocked.req.id, blocked.key, nodes[needed - 1].first.at, {}};
    for (size_t i = 0; i < needed; ++i) {
      // A gang keeps the nodes that hold a member now and gathers the rest
      // as they drain: binding busy nodes too would hold back every job
      // behind it for their unknown runtimes (measured: docs/benchmarks.md,
      // "Gangs in the replay").
      if (needed > 1 && nodes[i].first.at != now_) continue;
      here.nodes.emplace_back(nodes[i].second, nodes[i].first.spare);
    }
    const auto later = [](const std::optional<core::TimePoint>& a,
                          const std::optional<core::TimePoint>& b) {
      if (a.has_value() != b.has_value()) return !a.has_value();
      return a.has_value() && *a > *b;
    };
    if (!best || later(best->at, here.at) ||
        (best->at == here.at && here.nodes.front().first < best->nodes.front().first)) {
      best = std::move(here);
    }
  }
  if (best) shadow_ = *best;
}

void Scheduler::Start(Job& job, const Placement& p, std::vector<Action>* out) {
  Dequeue(job);
  job.phase = JobPhase::kRunning;
  job.node = p.node;
  job.gpus = p.gpus;
  job.started_at = now_;
  job.charged_until = now_;
  job.last_checkpoint.reset();
  job.awaiting_victims = 0;
  job.reclaiming = ReservationBook::kNone;
  for (GpuIndex g : p.gpus) cluster_.Take(g, job.req.gpu_milli);
  StartJob action = *Allocation(job.req.id);
  if (job.allowed.size() > 1) {
    action.why = model_costs_.Why(cluster_, cluster_.gpu(p.gpus.front()).gpu_class, job.allowed,
                                  config_.currency);
  }
  if (!p.why.empty()) action.why += (action.why.empty() ? "" : "; ") + p.why;
  for (NodeIndex n : NodesOf(job)) {
    on_node_[n].push_back(job.req.id);
    cluster_.TakeHost(n, job.req);
  }
  quotas_.Add(job.req.project, HeldMilli(job));
  ++running_count_;
  CountEvictable(job, +1);
  out->push_back(std::move(action));
}

// ---- preemption ---------------------------------------------------------

bool Scheduler::Evictable(const Job& job) const {
  // A job that is shrinking is left alone until it has.
  return job.phase == JobPhase::kRunning && job.leaving.empty() && job.req.may_be_preempted();
}

void Scheduler::CountEvictable(const Job& job, int delta) {
  if (!Evictable(job)) return;
  evictable_by_rank_[ClassRank(job.req.priority_class)] += delta;
  for (NodeIndex m : NodesOf(job)) {
    int& n = evictable_on_node_[m];
    n += delta;
    if (n == 0) evictable_on_node_.erase(m);
  }
}

bool Scheduler::MayPreemptSomeone(const Job& job) const {
  // A gang waits for free GPUs: victims on several nodes at once are not
  // planned.
  if (job.req.spans_nodes()) return false;
  const int rank = ClassRank(job.req.priority_class);
  for (int r = rank + 1; r < 3; ++r) {
    if (evictable_by_rank_[r] > 0) return true;
  }
  if (reservations_.any_active() && reservations_.OwnsActive(job.req.project) &&
      Lent(job.req.project)) {
    return true;
  }
  return has_guarantees_ && quotas_.borrowing_projects() > 0 &&
         quotas_.WithinGuarantee(job.req.project, job.req.total_milli());
}

int Scheduler::ReservedGpuHeldFor(const Job& victim, const std::string& project) const {
  for (GpuIndex g : victim.gpus) {
    const int s = reservations_.HolderOf(g);
    if (s != ReservationBook::kNone && reservations_.reservation(s).project == project) return s;
  }
  return ReservationBook::kNone;
}

bool Scheduler::Lent(const std::string& project) const {
  for (int s : reservations_.Active()) {
    const Reservation& r = reservations_.reservation(s);
    if (!project.empty() && r.project != project) continue;
    for (GpuIndex g : reservations_.gpus(s)) {
      if (cluster_.gpu(g).free_milli == kMilliPerGpu) continue;
      for (JobId id : on_node_[cluster_.gpu(g).node]) {
        const Job& job = jobs_.at(id);
        if (job.req.project != r.project && Evictable(job) &&
            std::find(job.gpus.begin(), job.gpus.end(), g) != job.gpus.end()) {
          return true;
        }
      }
    }
  }
  return false;
}

Scheduler::Ground Scheduler::PreemptionGround(const Job& job, const Job& victim) const {
  if (!Evictable(victim)) return Ground::kNone;
  // A borrower of reserved GPUs gives them back to their owner at once,
  // protection or not, as it would to an owner returning to the machine.
  if (reservations_.any_active() && victim.req.project != job.req.project &&
      ReservedGpuHeldFor(victim, job.req.project) != ReservationBook::kNone) {
    return Ground::kReservation;
  }
  if (victim.started_at + config_.min_runtime > now_) return Ground::kNone;
  if (ClassRank(victim.req.priority_class) > ClassRank(job.req.priority_class)) {
    return Ground::kOutranked;
  }
  const std::string& p = job.req.project;
  const std::string& q = victim.req.project;
  if (q != p && quotas_.Borrowing(q) && quotas_.WithinGuarantee(p, job.req.total_milli())) {
    return Ground::kReclaim;
  }
  return Ground::kNone;
}

std::string Scheduler::DescribeGround(Ground ground, const Job& job, const Job& victim) const {
  const std::string& p = job.req.project;
  const std::string& q = victim.req.project;
  if (ground == Ground::kOutranked) {
    return std::string(PriorityClassName(job.req.priority_class)) + " work outranks " +
           std::string(PriorityClassName(victim.req.priority_class));
  }
  if (ground == Ground::kReservation) {
    const Reservation& r = reservations_.reservation(ReservedGpuHeldFor(victim, p));
    return "reservation " + r.name + " takes back GPUs reserved for project " + r.project +
           "; project " + ProjectName(q) + " borrowed them while they were idle";
  }
  return "project " + ProjectName(p) + " reclaims its guaranteed GPUs (uses " +
         MilliAsGpus(quotas_.used_milli(p)) + " of " + MilliAsGpus(quotas_.guaranteed_milli(p)) +
         "); project " + ProjectName(q) + " borrows beyond its " +
         MilliAsGpus(quotas_.guaranteed_milli(q));
}

bool Scheduler::TryPreempt(Job& job, std::vector<Action>* out) {
  const std::vector<ClassId>& allowed = Allowed(job);
  std::optional<NodeEviction> best;
  int found = 0;
  const GpuFilter may_take = [&](GpuIndex g) { return MayTake(job.req, g); };
  const auto consider = [&](NodeIndex n) {
    std::vector<EvictableJob> evictable;
    for (JobId id : on_node_[n]) {
      const Job& v = jobs_.at(id);
      if (PreemptionGround(job, v) == Ground::kNone) continue;
      VictimCandidate c{id,
                        v.req.priority_class,
                        v.req.priority,
                        HeldMilli(v),
                        now_ - v.started_at,
                        v.last_checkpoint ? std::optional(now_ - *v.last_checkpoint) : std::nullopt,
                        v.req.checkpoints};
      const double cost = policies_.victims->Cost(c);
      const auto least = static_cast<size_t>(v.req.gpus);
      if (v.req.spans_nodes()) {  // what preempting it frees here
        std::vector<GpuIndex> here;
        for (GpuIndex g : v.gpus) {
          if (cluster_.gpu(g).node == n) here.push_back(g);
        }
        evictable.push_back(
            {id, std::move(here), v.req.gpu_milli, cost, false, v.req.cpu_milli, v.req.memory});
        continue;
      }
      if (!v.req.can_shrink || v.gpus.size() <= least) {
        evictable.push_back(
            {id, v.gpus, v.req.gpu_milli, cost, false, v.req.cpu_milli, v.req.memory});
        continue;
      }
      // Shrinking an elastic job comes before any preemption: one entry
      // per GPU above its least, the last GPU first, each priced below
      // every victim (costs are non-negative); a preemption frees the rest.
      evictable.push_back({id,
                           {v.gpus.begin(), v.gpus.begin() + static_cast<long>(least)},
                           v.req.gpu_milli,
                           cost,
                           false,
                           v.req.cpu_milli,
                           v.req.memory});
      for (size_t i = v.gpus.size(); i-- > least;) {
        const double step = -1.0 + 1e-3 * static_cast<double>(v.gpus.size() - 1 - i);
        evictable.push_back({id, {v.gpus[i]}, v.req.gpu_milli, step, true, 0, {}});
      }
    }
    if (evictable.empty()) return;
    auto plan = PlanEvictionOnNode(cluster_, job.req, allowed, n, std::move(evictable),
                                   reservations_.any_active() ? &may_take : nullptr);
    if (!plan || (plan->victims.empty() && plan->shrinks.empty())) return;
    if (!best || plan->cost < best->cost) best = std::move(plan);
    ++found;
  };
  // Nodes with the most free GPUs first: they need the fewest victims.
  // The search stops after `preemption_candidate_nodes` workable nodes.
  std::vector<bool> seen(cluster_.node_count(), false);
  int largest = 0;
  for (ClassId c : allowed) largest = std::max(largest, cluster_.LargestFree(c));
  for (int count = largest; count >= 1; --count) {
    for (ClassId c : allowed) {
      for (NodeIndex n : cluster_.NodesWithFree(c, count)) {
        if (found >= config_.preemption_candidate_nodes) break;
        if (seen[n] || !evictable_on_node_.contains(n)) continue;
        seen[n] = true;
        consider(n);
      }
    }
  }
  for (const auto& [n, count] : evictable_on_node_) {
    if (found >= config_.preemption_candidate_nodes) break;
    if (!seen[n]) consider(n);
  }
  if (!best) return false;
  const std::string prefix = "for " + JobWord(job.req.id) + " (" +
                             std::string(PriorityClassName(job.req.priority_class)) + ", needs " +
                             DescribeNeed(job.req) + "): ";
  // Reasons first: preempting changes the usage they quote.
  std::vector<std::string> reasons;
  job.reclaiming = ReservationBook::kNone;
  for (JobId id : best->victims) {
    const Job& victim = jobs_.at(id);
    const Ground ground = PreemptionGround(job, victim);
    if (ground == Ground::kReservation) {
      job.reclaiming = ReservedGpuHeldFor(victim, job.req.project);
    }
    reasons.push_back(prefix + DescribeGround(ground, job, victim));
  }
  std::vector<std::string> shrink_reasons;
  for (const auto& [id, give_up] : best->shrinks) {
    const Job& victim = jobs_.at(id);
    const Ground ground = PreemptionGround(job, victim);
    if (ground == Ground::kReservation) {
      job.reclaiming = ReservedGpuHeldFor(victim, job.req.project);
    }
    shrink_reasons.push_back(prefix + DescribeGround(ground, job, victim));
  }
  for (size_t i = 0; i < best->shrinks.size(); ++i) {
    Shrink(jobs_.at(best->shrinks[i].first), best->shrinks[i].second, shrink_reasons[i], job.req.id,
           out);
  }
  for (size_t i = 0; i < best->victims.size(); ++i) {
    Preempt(jobs_.at(best->victims[i]), reasons[i], job.req.id, out);
  }
  job.awaiting_victims = static_cast<int>(best->victims.size() + best->shrinks.size());
  job.wait = {WaitReason::Kind::kAwaitingVictims, {}, 0, 0, job.awaiting_victims};
  return true;
}

void Scheduler::Preempt(Job& victim, const std::string& reason, std::optional<JobId> beneficiary,
                        std::vector<Action>* out) {
  CountEvictable(victim, -1);
  victim.phase = JobPhase::kVacating;
  // A shrinking job taken back whole still frees GPUs for the job it shrank for.
  if (beneficiary) victim.beneficiary = beneficiary;
  victim.preempt_reason = reason;
  out->push_back(PreemptJob{victim.req.id, reason});
}

void Scheduler::Shrink(Job& job, const std::vector<GpuIndex>& give_up, const std::string& reason,
                       std::optional<JobId> beneficiary, std::vector<Action>* out) {
  CountEvictable(job, -1);
  job.leaving = give_up;
  job.beneficiary = beneficiary;
  ResizeJob action{job.req.id, cluster_.node(job.node).id, {}, {}, reason};
  for (GpuIndex g : job.gpus) {
    if (std::find(give_up.begin(), give_up.end(), g) != give_up.end()) continue;
    action.gpus.push_back(cluster_.gpu(g).spec.uuid);
    action.gpu_indices.push_back(cluster_.gpu(g).spec.index);
  }
  out->push_back(std::move(action));
}

void Scheduler::VictimLeft(Job& victim) {
  if (!victim.beneficiary) return;
  auto b = jobs_.find(*victim.beneficiary);
  if (b != jobs_.end() && b->second.phase == JobPhase::kPending && b->second.awaiting_victims > 0 &&
      --b->second.awaiting_victims == 0) {
    victims_gone_.push_back(*victim.beneficiary);
  }
  victim.beneficiary.reset();
}

// ---- bookkeeping --------------------------------------------------------

void Scheduler::Release(Job& job) {
  CountEvictable(job, -1);
  Charge(job, now_);
  for (NodeIndex n : NodesOf(job)) {
    auto& here = on_node_[n];
    here.erase(std::find(here.begin(), here.end(), job.req.id));
    cluster_.GiveHost(n, job.req);
  }
  for (GpuIndex g : job.gpus) cluster_.Give(g, job.req.gpu_milli);
  quotas_.Remove(job.req.project, HeldMilli(job));
  --running_count_;
  VictimLeft(job);
  job.gpus.clear();
  job.leaving.clear();
  dirty_ = true;
}

void Scheduler::Requeue(Job& job, const std::string& reason, std::vector<Action>* out) {
  job.phase = JobPhase::kPending;
  job.wait = {};
  job.awaiting_victims = 0;
  job.reclaiming = ReservationBook::kNone;
  // It keeps its submit time, so its age still counts.
  Enqueue(job);
  out->push_back(RequeueJob{job.req.id, reason});
}

OrderKey Scheduler::FreshKey(const Job& job, double project_factor, double user_factor) const {
  OrderKey key =
      policies_.ordering->Key({&job.req, job.submitted_at, now_, project_factor, user_factor});
  key.id = job.req.id;  // keeps keys unique whatever the policy returns
  return key;
}

void Scheduler::Enqueue(Job& job) {
  job.key = FreshKey(job, project_usage_.Factor(job.req.project), user_usage_.Factor(job.req.user));
  if (job.queue_group < 0) job.queue_group = queue_.GroupOf(job.req, LikenessOf(job.req));
  queue_.Add(job.queue_group, job.req, job.submitted_at, job.key);
  const auto shape = static_cast<size_t>(job.shape_id);
  if (queued_of_shape_.size() <= shape) queued_of_shape_.resize(shape + 1, 0);
  if (queued_of_shape_[shape]++ == 0) ++waiting_shapes_;
  if (job.req.expected_runtime) ++pending_with_runtime_;
}

void Scheduler::Dequeue(const Job& job) {
  queue_.Remove(job.queue_group, job.req, job.submitted_at, job.key);
  if (--queued_of_shape_[static_cast<size_t>(job.shape_id)] == 0) --waiting_shapes_;
  if (job.req.expected_runtime) --pending_with_runtime_;
}

void Scheduler::Charge(Job& job, core::TimePoint until) {
  if (until <= job.charged_until) return;
  const double milli_s =
      core::ToSecondsDouble(until - job.charged_until) * static_cast<double>(HeldMilli(job));
  if (!job.project_account) {
    job.project_account = project_usage_.HandleOf(job.req.project);
    job.user_account = user_usage_.HandleOf(job.req.user);
  }
  project_usage_.Charge(job.project_account, milli_s);
  user_usage_.Charge(job.user_account, milli_s);
  job.charged_until = until;
}

const std::vector<ClassId>& Scheduler::Allowed(Job& job) {
  if (job.allowed_for_classes != cluster_.class_count()) {
    job.allowed = AllowedClasses(cluster_, job.req);
    job.allowed_for_classes = cluster_.class_count();
  }
  return job.allowed;
}

int Scheduler::ShapeOf(const JobRequest& req) {
  auto key = std::make_tuple(req.gpus, req.max_gpus, req.gpu_milli, req.min_gpu_memory.count(),
                             req.gpu_models, req.gpu_memory.count(), req.nodes, req.one_rack,
                             req.cpu_milli, req.memory.count());
  auto [it, added] = shapes_.try_emplace(std::move(key), static_cast<int>(shapes_.size()));
  return it->second;
}

int Scheduler::LikenessOf(const JobRequest& req) {
  auto key = std::make_tuple(ShapeOf(req), req.preemptible,
                             req.expected_runtime ? req.expected_runtime->count() : int64_t{-1});
  auto [it, added] = likenesses_.try_emplace(key, static_cast<int>(likenesses_.size()));
  return it->second;
}

// ---- queries ------------------------------------------------------------

JobPhase Scheduler::Phase(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? JobPhase::kUnknown : it->second.phase;
}

core::Result<std::string> Scheduler::PendingReason(JobId id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.phase != JobPhase::kPending) {
    return core::NotFound(JobWord(id) + " is not pending");
  }
  const Job& job = it->second;
  if (job.awaiting_victims > 0) {
    const std::string n = std::to_string(job.awaiting_victims);
    if (job.reclaiming != ReservationBook::kNone) {
      return "waiting for " + n + (job.awaiting_victims == 1 ? " borrower" : " borrowers") +
             " to leave the GPUs " + ReservationWords(reservations_.reservation(job.reclaiming));
    }
    return DescribeWait({WaitReason::Kind::kAwaitingVictims, {}, 0, 0, job.awaiting_victims},
                        job.req, cluster_);
  }
  const Job* judged = JudgedBy(job);
  if (!judged || judged->considered_in_pass < early_stop_pass_ ||
      judged->wait.kind == WaitReason::Kind::kNotConsidered ||
      !quotas_.Admits(job.req.project, job.req.total_milli())) {
    // The last pass stopped before this job, or passed over its project
    // (no room under its quota): judge it against the cluster as it is
    // now, which costs a few look-ups.
    const JobRequest& req = job.req;
    if (cluster_.live_gpu_count() == 0) {
      return DescribeWait({WaitReason::Kind::kNoNodes, {}, 0, 0, 0}, req, cluster_);
    }
    if (!quotas_.Admits(req.project, req.total_milli())) {
      return DescribeWait({WaitReason::Kind::kQuota,
                           {},
                           quotas_.used_milli(req.project),
                           quotas_.limit_milli(req.project).value_or(0),
                           0},
                          req, cluster_);
    }
    const NoFit fit = DescribeNoFit(cluster_, req, AllowedClasses(cluster_, req));
    const bool might_fit = req.fractional()
                               ? fit.largest_free > 0 || fit.largest_share_milli >= req.gpu_milli
                               : fit.largest_free >= req.gpus;
    if (might_fit) {
      return std::string(
          "not reached by the last pass, which stopped after many jobs ahead of it could not "
          "start; the next Tick considers every job");
    }
    return DescribeWait({WaitReason::Kind::kNoFit, fit, 0, 0, 0}, req, cluster_);
  }
  if (judged->wait.kind == WaitReason::Kind::kNoFit &&
      judged->wait.reserved_by != ReservationBook::kNone) {
    return "needs " + DescribeNeed(job.req) + Where(job.req) +
           "; the free GPUs that would fit it are " +
           ReservationWords(reservations_.reservation(judged->wait.reserved_by)) +
           ", lent only to preemptible jobs of other projects";
  }
  if (judged->wait.kind == WaitReason::Kind::kNoFit && judged->wait.kept_for != 0) {
    std::string s = "needs " + DescribeNeed(job.req) + Where(job.req) +
                    "; the free GPUs that would fit it are kept for " +
                    JobWord(judged->wait.kept_for);
    if (auto k = jobs_.find(judged->wait.kept_for); k != jobs_.end()) {
      s += " (needs " + DescribeNeed(k->second.req) + ")";
    }
    if (!judged->wait.kept_until) {
      return s +
             " until jobs without an expected runtime end; a job with an expected runtime may use "
             "them meanwhile";
    }
    const int64_t in_s = std::max<int64_t>(
        0, std::chrono::duration_cast<core::Seconds>(*judged->wait.kept_until - now_).count());
    return s + ", which should fit in " + std::to_string(in_s) +
           " s; only jobs expected to end by then may use them (backfill)";
  }
  return DescribeWait(judged->wait, job.req, cluster_);
}

const Scheduler::Job* Scheduler::JudgedBy(const Job& job) const {
  const auto g = static_cast<size_t>(job.queue_group);
  if (job.queue_group < 0 || g >= group_skips_.size() ||
      group_skips_[g].pass <= job.considered_in_pass) {
    return &job;
  }
  const auto by = jobs_.find(group_skips_[g].judged_by);
  if (by == jobs_.end() || by->second.phase != JobPhase::kPending ||
      by->second.considered_in_pass != group_skips_[g].pass) {
    return nullptr;
  }
  return &by->second;
}

core::Result<std::vector<core::GpuUuid>> Scheduler::ReservedGpus(const std::string& name) const {
  const auto s = reservations_.Find(name);
  if (!s) return core::NotFound("no reservation " + name + " (never added, or ended)");
  std::vector<core::GpuUuid> out;
  for (GpuIndex g : reservations_.gpus(*s)) out.push_back(cluster_.gpu(g).spec.uuid);
  return out;
}

std::vector<NodeIndex> Scheduler::NodesOf(const Job& job) const { return NodesOf(job.gpus); }

std::vector<NodeIndex> Scheduler::NodesOf(const std::vector<GpuIndex>& gpus) const {
  std::vector<NodeIndex> nodes;
  for (GpuIndex g : gpus) {
    const NodeIndex n = cluster_.gpu(g).node;
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  }
  return nodes;
}

std::optional<StartJob> Scheduler::Allocation(JobId id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.phase == JobPhase::kPending) return std::nullopt;
  const Job& job = it->second;
  StartJob a{id, cluster_.node(job.node).id, {}, {}, job.req.gpu_milli, {}};
  for (GpuIndex g : job.gpus) {
    a.gpus.push_back(cluster_.gpu(g).spec.uuid);
    a.gpu_indices.push_back(cluster_.gpu(g).spec.index);
  }
  if (job.req.spans_nodes()) {
    for (NodeIndex n : NodesOf(job)) a.gang.push_back(cluster_.node(n).id);
  }
  return a;
}

}  // namespace gleaner::sched
