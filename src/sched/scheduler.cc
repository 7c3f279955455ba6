#include "sched/scheduler.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/format.h"
#include "sched/frag_score.h"
#include "sched/gang_placement.h"
#include "sched/placement.h"
#include "sched/preemption.h"
#include "sched/scheduler_words.h"

namespace gleaner::sched {

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
    const JobRequest req = shape.Request();
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
  const auto missed = [&](Backfill b) { return shape_misses_.Missed(b, shape_id, pass_); };
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
  const Backfill backfill = BackfillOf(job);
  ShapeMiss fresh;
  ShapeMiss* shared = shape_misses_.Of(AccessOf(job), backfill, job.shape_id);
  ShapeMiss* miss = shared == nullptr ? &fresh : shared;  // owners' fits are their own
  if (miss->pass != pass_ || shared == nullptr) {
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

}  // namespace gleaner::sched
