#include "sim/harvest_inputs.h"

#include <algorithm>
#include <filesystem>

#include "sim/helios_trace.h"
#include "sim/itp_trace.h"
#include "sim/owner_sources.h"
#include "sim/philly_trace.h"
#include "sim/utilization_trace.h"

namespace gleaner::sim {
namespace {

namespace fs = std::filesystem;

// A file's or folder's own name, also for a folder given with a trailing /.
std::string NameOf(const std::string& path) {
  fs::path p(path);
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

}  // namespace

core::Result<OwnerWorkload> LoadOwnerWorkload(const OwnerTraceFiles& o) {
  OwnerWorkload owner;
  if (!o.genai.empty()) {
    TraceCleaning cleaning;
    GLEANER_ASSIGN_OR_RETURN(
        std::vector<UtilizationSeries> series,
        ReadUtilizationTrace(o.genai, o.genai_memory, o.skip_bad_rows, &cleaning));
    if (cleaning.bad_rows_skipped > 0) {
      owner.skipped.push_back(std::to_string(cleaning.bad_rows_skipped) + " dirty rows of " +
                              o.genai);
    }
    owner.kind = "genai";
    owner.trace = NameOf(o.genai);
    owner.skipped_rows = cleaning.bad_rows_skipped;
    owner.timeline = TimelineFromUtilization(owner.trace, series, o.gpus_per_node);
    return owner;
  }
  if (!o.helios.empty()) {
    HeliosReadOptions read;
    read.skip_bad_rows = o.skip_bad_rows;
    std::vector<HeliosVc> vcs;
    if (fs::is_directory(o.helios)) {
      GLEANER_ASSIGN_OR_RETURN(vcs, ReadHeliosDir(o.helios, read));
    } else {
      GLEANER_ASSIGN_OR_RETURN(HeliosVc vc, ReadHeliosVc(o.helios, read));
      vcs.push_back(std::move(vc));
    }
    for (const HeliosVc& vc : vcs) {
      owner.skipped.insert(owner.skipped.end(), vc.skipped_messages.begin(),
                           vc.skipped_messages.end());
      owner.skipped_rows += vc.cleaning.bad_rows_skipped;
    }
    owner.kind = "helios";
    owner.trace = NameOf(o.helios);
    GLEANER_ASSIGN_OR_RETURN(owner.timeline, TimelineFromHelios(vcs, o.gpus_per_node));
    return owner;
  }
  if (!o.philly.empty()) {
    PhillyReadOptions read;
    read.skip_bad_rows = o.skip_bad_rows;
    GLEANER_ASSIGN_OR_RETURN(PhillyNodeSequence seq, ReadPhillyNodeSequence(o.philly, read));
    owner.skipped.insert(owner.skipped.end(), seq.skipped_messages.begin(),
                         seq.skipped_messages.end());
    const std::string machines_path =
        o.philly_machines.empty()
            ? (fs::path(o.philly).parent_path() / "cluster_machine_list").string()
            : o.philly_machines;
    GLEANER_ASSIGN_OR_RETURN(std::vector<PhillyMachine> machines,
                             ReadPhillyMachines(machines_path));
    owner.kind = "philly";
    owner.trace = NameOf(o.philly);
    owner.skipped_rows = seq.cleaning.bad_rows_skipped;
    GLEANER_ASSIGN_OR_RETURN(owner.timeline, TimelineFromPhilly(seq, machines));
    return owner;
  }
  return core::InvalidArgument(
      "give the owner workload: --genai FILE, --helios DIR or --philly FILE");
}

core::Result<HarvestQueue> LoadHarvestQueue(const HarvestQueueSource& o, const OwnerTimeline& owner,
                                            double idle_gpu_s, core::Bytes gpu_memory) {
  HarvestQueue q;
  int largest_node = 1;
  for (int n : owner.node_gpus) largest_node = std::max(largest_node, n);
  if (!o.itp.empty()) {
    ItpReadOptions read;
    read.skip_bad_rows = o.skip_bad_rows;
    GLEANER_ASSIGN_OR_RETURN(ItpTrace trace, ReadItpJobs(o.itp, read));
    q.skipped = trace.skipped_messages;
    QueueFromTrace from = QueueFromTraceJobs(trace.jobs, owner.start_s, owner.end_s, largest_node);
    q.jobs = std::move(from.jobs);
    q.too_large = from.too_large;
    q.too_late = from.too_late;
    q.source = NameOf(o.itp);
  } else {
    SyntheticQueueOptions s;
    s.seed = o.seed;
    s.start_s = owner.start_s;
    s.end_s = owner.end_s;
    s.offered_gpu_s = o.load * idle_gpu_s;
    s.max_gpus = largest_node;
    s.max_gpu_memory = gpu_memory;
    q.jobs = SyntheticQueue(s);
    q.source = "synthetic";
  }
  for (const HarvestJob& j : q.jobs) {
    q.offered_gpu_hours += static_cast<double>(j.work_s * j.gpus) / 3600.0;
  }
  return q;
}

}  // namespace gleaner::sim
