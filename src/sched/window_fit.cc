#include "sched/window_fit.h"

#include <algorithm>

#include "core/format.h"

namespace gleaner::sched {
namespace {

int64_t WholeSeconds(core::Duration d) { return d.count() / 1'000'000; }

}  // namespace

WindowFit FitWindows(const std::vector<core::Duration>& quiet_p80, core::Duration runtime) {
  if (runtime.count() <= 0 || quiet_p80.empty()) return {};
  bool unknown = false;
  core::Duration shortest = quiet_p80.front();
  for (core::Duration w : quiet_p80) {
    if (w.count() <= 0)
      unknown = true;
    else if (shortest.count() <= 0 || w < shortest)
      shortest = w;
  }
  // The job lasts only as long as the first of its GPUs stays quiet.
  if (shortest.count() > 0 && shortest < runtime) {
    return {2, WholeSeconds(runtime - shortest)};
  }
  if (unknown) return {1, 0};
  return {0, WholeSeconds(shortest - runtime)};
}

WindowFit FitGpus(const ClusterState& cluster, const std::vector<GpuIndex>& gpus,
                  core::Duration runtime) {
  if (runtime.count() <= 0) return {};
  std::vector<core::Duration> windows;
  windows.reserve(gpus.size());
  for (GpuIndex g : gpus) windows.push_back(cluster.gpu(g).spec.quiet_p80);
  return FitWindows(windows, runtime);
}

std::string DescribeWindowFit(const ClusterState& cluster, const std::vector<GpuIndex>& gpus,
                              core::Duration runtime, const std::string& basis) {
  if (runtime.count() <= 0 || gpus.empty()) return "";
  core::Duration shortest{};
  for (GpuIndex g : gpus) {
    const core::Duration w = cluster.gpu(g).spec.quiet_p80;
    if (w.count() <= 0) return "";  // nothing known to say
    if (shortest.count() == 0 || w < shortest) shortest = w;
  }
  const std::string job =
      "job expected " + core::FormatDuration(runtime) + (basis.empty() ? "" : " (" + basis + ")");
  const std::string of = gpus.size() > 1 ? " (the shortest of its GPUs)" : "";
  if (shortest >= runtime) {
    return "expected idle >= " + core::FormatDuration(shortest) + " at p80" + of + "; " + job;
  }
  return "no free GPU looked at is expected idle that long at p80; this one " +
         core::FormatDuration(shortest) + of + "; " + job;
}

core::Duration RoundQuietWindow(core::Duration quiet_p80) {
  const int64_t minutes = WholeSeconds(quiet_p80) / 60;
  if (minutes < 1) return {};
  int64_t step = 1;
  while (step * 2 <= minutes) step *= 2;
  return core::Seconds(step * 60);
}

}  // namespace gleaner::sched
