#include "sched/job_request.h"

#include <string>

namespace gleaner::sched {

RuntimeKey RuntimeKeyOf(const JobSpec& spec, const std::string& user) {
  return {user, spec.project, CommandKey(spec.command)};
}

JobRequest RequestFromSpec(JobId id, const JobSpec& spec, std::string user,
                           const RuntimeHistory* history) {
  JobRequest r;
  r.id = id;
  r.project = spec.project;
  r.user = std::move(user);
  r.gpus = spec.gpus;
  r.nodes = spec.nodes;
  r.one_rack = spec.one_rack;
  r.max_gpus = spec.max_gpus;
  r.can_shrink = spec.can_shrink;
  r.min_gpu_memory = spec.min_gpu_memory;
  r.gpu_memory = spec.gpu_memory;
  r.gpu_models = spec.gpu_models;
  r.cpu_milli = spec.cpu_milli;
  r.memory = spec.memory;
  r.priority_class = spec.priority_class;
  r.priority = spec.priority;
  r.preemptible = spec.preemptible;
  r.expected_runtime = spec.expected_runtime;
  if (spec.expected_runtime) {
    r.runtime_guess = *spec.expected_runtime;
    r.runtime_basis = "declared";
  } else if (auto guess = history ? history->Predict(RuntimeKeyOf(spec, r.user)) : std::nullopt) {
    r.runtime_guess = guess->p80;
    r.runtime_basis = guess->basis;
    if (spec.max_runtime && *spec.max_runtime < r.runtime_guess) {
      r.runtime_guess = *spec.max_runtime;
      r.runtime_basis += ", capped by its max_runtime";
    }
  } else if (spec.max_runtime) {
    r.runtime_guess = *spec.max_runtime;
    r.runtime_basis = "its max_runtime";
  }
  return r;
}

core::Status ValidateRequestShape(const JobRequest& job) {
  if (job.gpus < 1) {
    return core::InvalidArgument("gpus: at least 1; got " + std::to_string(job.gpus));
  }
  if (job.gpu_milli < 1 || job.gpu_milli > kMilliPerGpu) {
    return core::InvalidArgument("gpu_milli: 1..1000 (1000 is a whole GPU); got " +
                                 std::to_string(job.gpu_milli));
  }
  if (job.fractional() && job.gpus != 1) {
    return core::InvalidArgument(
        "gpu_milli: a share below a whole GPU is for one GPU; ask for gpus 1, or whole GPUs");
  }
  if (job.max_gpus != 0 && job.max_gpus < job.gpus) {
    return core::InvalidArgument("max_gpus: at least gpus (" + std::to_string(job.gpus) +
                                 ", the fewest it runs on); got " + std::to_string(job.max_gpus) +
                                 "; 0 asks for exactly gpus");
  }
  if (job.elastic() && job.fractional()) {
    return core::InvalidArgument(
        "max_gpus: a range of GPUs is for whole GPUs; drop gpu_milli or max_gpus");
  }
  if (job.nodes < 1) {
    return core::InvalidArgument("nodes: at least 1; got " + std::to_string(job.nodes));
  }
  if (job.spans_nodes() && (job.elastic() || job.fractional())) {
    return core::InvalidArgument(
        "nodes: a gang over several nodes takes whole GPUs, a fixed number on each; drop "
        "max_gpus and gpu_milli, or ask for one node");
  }
  if (job.one_rack && !job.spans_nodes()) {
    return core::InvalidArgument("one_rack: only for a gang over several nodes");
  }
  if (job.priority < -1000 || job.priority > 1000) {
    return core::InvalidArgument("priority: -1000..1000; got " + std::to_string(job.priority));
  }
  return core::Status::Ok();
}

int ClassRank(PriorityClass c) {
  switch (c) {
    case PriorityClass::kCritical:
      return 0;
    case PriorityClass::kNormal:
      return 1;
    case PriorityClass::kOpportunistic:
      return 2;
  }
  return 1;
}

FitShape FitShape::Of(const JobRequest& req) {
  return {req.gpus,       req.max_gpus, req.gpu_milli, req.min_gpu_memory, req.gpu_models,
          req.gpu_memory, req.nodes,    req.one_rack,  req.cpu_milli,      req.memory};
}

JobRequest FitShape::Request() const {
  JobRequest req;
  req.gpus = gpus;
  req.max_gpus = max_gpus;
  req.gpu_milli = gpu_milli;
  req.min_gpu_memory = min_gpu_memory;
  req.gpu_models = gpu_models;
  req.gpu_memory = gpu_memory;
  req.nodes = nodes;
  req.one_rack = one_rack;
  req.cpu_milli = cpu_milli;
  req.memory = memory;
  return req;
}

}  // namespace gleaner::sched
