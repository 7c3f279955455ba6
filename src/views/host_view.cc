#include "views/host_view.h"

#include "core/host_name.h"

namespace gleaner::views {

HostView BuildHostView(core::TimePoint at, const gpu::DriverInfo& driver,
                       std::vector<gpu::GpuSnapshot> snapshots,
                       const agent::ProcessInspector& inspector,
                       const std::map<core::GpuUuid, observe::Verdict>& verdicts) {
  HostView view;
  view.taken_at = at;
  view.hostname = core::Hostname();
  view.driver = driver;
  for (gpu::GpuSnapshot& s : snapshots) {
    GpuView gv;
    if (s.processes.has_value()) {
      for (const gpu::GpuProcess& p : s.processes.value()) {
        gv.processes.push_back({p, inspector.Inspect(p.pid)});
      }
    }
    const core::GpuUuid key =
        s.uuid.empty() ? core::GpuUuid("index:" + std::to_string(s.index)) : s.uuid;
    if (auto it = verdicts.find(key); it != verdicts.end()) gv.verdict = it->second;
    gv.snapshot = std::move(s);
    view.gpus.push_back(std::move(gv));
  }
  return view;
}

std::vector<slurm::HostGpu> SlurmHostGpus(const std::vector<gpu::GpuSnapshot>& snapshots,
                                          const std::vector<observe::Verdict>& verdicts) {
  std::vector<slurm::HostGpu> gpus;
  for (const gpu::GpuSnapshot& s : snapshots) {
    slurm::HostGpu g{s.index, s.uuid, std::nullopt,
                     s.processes.has_value() ? static_cast<int>(s.processes.value().size()) : 0};
    for (const observe::Verdict& v : verdicts) {
      if (!s.uuid.empty() && v.uuid == s.uuid) g.verdict = v;
    }
    gpus.push_back(std::move(g));
  }
  return gpus;
}

void AttachSlurmJobs(HostView& view, const std::string& node,
                     const std::vector<slurm::SlurmJob>& jobs, std::optional<core::TimePoint> as_of,
                     std::string error) {
  std::vector<slurm::HostGpu> gpus;
  for (const GpuView& g : view.gpus) {
    gpus.push_back(
        {g.snapshot.index, g.snapshot.uuid, g.verdict, static_cast<int>(g.processes.size())});
  }
  view.slurm = true;
  view.slurm_node = node;
  view.slurm_jobs = slurm::JobsOnHost(jobs, node, gpus);
  view.slurm_at = as_of;
  view.slurm_error = std::move(error);
}

core::Result<HostView> ReadHost(gpu::GpuBackend& backend, const agent::ProcessInspector& inspector,
                                core::TimePoint now, bool with_topology) {
  GLEANER_ASSIGN_OR_RETURN(std::vector<gpu::GpuSnapshot> snapshots, backend.Snapshot());
  HostView view = BuildHostView(now, backend.Driver(), std::move(snapshots), inspector, {});
  if (with_topology) {
    GLEANER_ASSIGN_OR_RETURN(view.topology, backend.Topology());
  }
  return view;
}

}  // namespace gleaner::views
