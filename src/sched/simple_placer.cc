#include "sched/simple_placer.h"

#include <algorithm>
#include <tuple>

#include "core/format.h"

namespace gleaner::sched {
namespace {

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

}  // namespace

bool Fits(const JobSpec& spec, const FreeGpu& gpu) {
  if (gpu.memory_total < spec.min_gpu_memory) return false;
  if (spec.gpu_models.empty()) return true;
  return std::any_of(spec.gpu_models.begin(), spec.gpu_models.end(), [&](const std::string& m) {
    return !m.empty() && gpu.model.find(m) != std::string::npos;
  });
}

std::string WhyWaiting(const JobSpec& spec, const std::vector<FreeGpu>& free) {
  std::string needs = "needs " + std::to_string(spec.gpus) + " GPU" + (spec.gpus == 1 ? "" : "s");
  if (spec.min_gpu_memory > core::Bytes()) {
    needs += " of at least " + core::FormatBytes(spec.min_gpu_memory);
  }
  if (!spec.gpu_models.empty()) {
    std::string models;
    for (const std::string& m : spec.gpu_models) models += (models.empty() ? "" : " or ") + m;
    needs += ", model " + models;
  }
  const auto fitting = std::count_if(free.begin(), free.end(),
                                     [&](const FreeGpu& g) { return Fits(spec, g); });
  if (free.empty()) return needs + "; no GPU is idle now";
  std::string why = needs + "; " + std::to_string(free.size()) + " idle";
  if (static_cast<size_t>(fitting) < free.size()) {
    why += ", " + std::to_string(fitting) + " of them fit" + (fitting == 1 ? "s" : "");
  }
  if (fitting >= spec.gpus) why += ", taken by jobs ahead of it";
  return why;
}

std::vector<Placement> PlaceJobs(std::vector<QueuedJob> queue, std::vector<FreeGpu> free) {
  std::sort(queue.begin(), queue.end(), [](const QueuedJob& a, const QueuedJob& b) {
    return std::tuple(ClassRank(a.spec.priority_class), -a.spec.priority, a.submitted_at, a.id) <
           std::tuple(ClassRank(b.spec.priority_class), -b.spec.priority, b.submitted_at, b.id);
  });
  // Smallest first, so that the first adequate GPUs are the tightest fit.
  std::sort(free.begin(), free.end(), [](const FreeGpu& a, const FreeGpu& b) {
    return std::tie(a.memory_total, a.uuid) < std::tie(b.memory_total, b.uuid);
  });
  std::vector<Placement> out;
  for (const QueuedJob& job : queue) {
    std::vector<size_t> chosen;
    for (size_t i = 0; i < free.size() && chosen.size() < static_cast<size_t>(job.spec.gpus); ++i) {
      if (Fits(job.spec, free[i])) chosen.push_back(i);
    }
    if (chosen.size() < static_cast<size_t>(job.spec.gpus)) continue;
    Placement p{job.id, {}};
    for (size_t i : chosen) p.gpus.push_back(free[i].uuid);
    for (auto it = chosen.rbegin(); it != chosen.rend(); ++it) {
      free.erase(free.begin() + static_cast<std::ptrdiff_t>(*it));
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gleaner::sched
