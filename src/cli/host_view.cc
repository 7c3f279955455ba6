#include "cli/host_view.h"

#include <unistd.h>

namespace gleaner::cli {
namespace {

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace

core::Result<HostView> ReadHost(gpu::GpuBackend& backend, const agent::ProcessInspector& inspector,
                                core::TimePoint now, bool with_topology) {
  HostView view;
  view.taken_at = now;
  view.hostname = Hostname();
  view.driver = backend.Driver();
  GLEANER_ASSIGN_OR_RETURN(std::vector<gpu::GpuSnapshot> snapshots, backend.Snapshot());
  for (gpu::GpuSnapshot& s : snapshots) {
    GpuView gv;
    if (s.processes.has_value()) {
      for (const gpu::GpuProcess& p : s.processes.value()) {
        gv.processes.push_back({p, inspector.Inspect(p.pid)});
      }
    }
    gv.snapshot = std::move(s);
    view.gpus.push_back(std::move(gv));
  }
  if (with_topology) {
    GLEANER_ASSIGN_OR_RETURN(view.topology, backend.Topology());
  }
  return view;
}

}  // namespace gleaner::cli
