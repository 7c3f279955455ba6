#include "slurm/allocation.h"

#include <algorithm>
#include <chrono>

namespace gleaner::slurm {
namespace {

double Hours(core::Duration d) {
  return std::chrono::duration<double, std::ratio<3600>>(d).count();
}

// How long `job` has left `gpu` unused at `now`, or nullopt when it is in
// use: from the later of the verdict's start and the job's, since a GPU that
// sat idle for an hour before the job got it says nothing of the job.
std::optional<core::Duration> UnusedSpell(const SlurmJob& job, const AllocatedGpu& gpu,
                                          core::TimePoint now) {
  if (!gpu.Unused()) return std::nullopt;
  const core::TimePoint since =
      job.start_time ? std::max(gpu.verdict->since, *job.start_time) : gpu.verdict->since;
  return std::max(core::Duration{}, now - since);
}

}  // namespace

bool AllocatedGpu::Unused() const {
  return verdict && (verdict->state == observe::GpuState::kIdle ||
                     verdict->state == observe::GpuState::kHeldIdle);
}

int JobOnHost::UnusedGpus(core::TimePoint now, core::Duration at_least) const {
  return static_cast<int>(std::count_if(gpus.begin(), gpus.end(), [&](const AllocatedGpu& g) {
    auto spell = UnusedSpell(job, g, now);
    return spell && *spell >= at_least;
  }));
}

std::optional<core::Duration> JobOnHost::UnusedFor(core::TimePoint now,
                                                   core::Duration at_least) const {
  std::optional<core::Duration> shortest;
  for (const AllocatedGpu& g : gpus) {
    auto spell = UnusedSpell(job, g, now);
    if (spell && *spell >= at_least && (!shortest || *spell < *shortest)) shortest = spell;
  }
  return shortest;
}

std::vector<JobOnHost> JobsOnHost(const std::vector<SlurmJob>& jobs, const std::string& node,
                                  const std::vector<HostGpu>& gpus) {
  std::vector<JobOnHost> out;
  for (const SlurmJob& job : jobs) {
    if (!job.HoldsResources()) continue;
    auto mine = job.gpus_by_node.find(node);
    if (mine == job.gpus_by_node.end()) continue;
    JobOnHost on_host{job, {}};
    for (uint32_t index : mine->second) {
      AllocatedGpu allocated;
      allocated.index = index;
      auto gpu = std::find_if(gpus.begin(), gpus.end(),
                              [&](const HostGpu& g) { return g.index == index; });
      if (gpu != gpus.end()) {
        allocated.uuid = gpu->uuid;
        allocated.verdict = gpu->verdict;
        allocated.processes = gpu->processes;
      }
      on_host.gpus.push_back(std::move(allocated));
    }
    out.push_back(std::move(on_host));
  }
  return out;
}

const JobOnHost* HolderOf(const std::vector<JobOnHost>& jobs, uint32_t index) {
  for (const JobOnHost& j : jobs) {
    for (const AllocatedGpu& g : j.gpus) {
      if (g.index == index) return &j;
    }
  }
  return nullptr;
}

JobUsage& JobUsage::operator+=(const JobUsage& o) {
  allocated_gpu_hours += o.allocated_gpu_hours;
  observed_gpu_hours += o.observed_gpu_hours;
  used_gpu_hours += o.used_gpu_hours;
  idle_gpu_hours += o.idle_gpu_hours;
  held_idle_gpu_hours += o.held_idle_gpu_hours;
  return *this;
}

JobUsage UsageOf(const JobOnHost& job,
                 const std::map<core::GpuUuid, std::vector<observe::MinuteRollup>>& rollups,
                 core::TimePoint now) {
  JobUsage usage;
  if (!job.job.start_time || now <= *job.job.start_time) return usage;
  const core::TimePoint start = *job.job.start_time;
  usage.allocated_gpu_hours = Hours(now - start) * static_cast<double>(job.gpus.size());
  // Summed as durations, converted once: exact where the minutes are.
  core::Duration observed{}, used{}, idle{}, held_idle{};
  for (const AllocatedGpu& g : job.gpus) {
    auto minutes = rollups.find(g.uuid);
    if (g.uuid.empty() || minutes == rollups.end()) continue;
    for (const observe::MinuteRollup& m : minutes->second) {
      // A minute that began before the start was someone else's.
      if (m.minute < start || m.minute >= now) continue;
      observed += m.observed;
      // gleaner's own jobs' time (harvested, shared) is not the Slurm job's.
      used += m.busy - m.held_idle - m.harvested;
      idle += m.idle;
      held_idle += m.held_idle;
    }
  }
  usage.observed_gpu_hours = Hours(observed);
  usage.used_gpu_hours = Hours(used);
  usage.idle_gpu_hours = Hours(idle);
  usage.held_idle_gpu_hours = Hours(held_idle);
  return usage;
}

}  // namespace gleaner::slurm
