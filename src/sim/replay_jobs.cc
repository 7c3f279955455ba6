#include "sim/replay_jobs.h"

#include <utility>

#include "sim/itp_trace.h"
#include "sim/openb_jobs.h"

namespace gleaner::sim {

core::Result<ReplayJobs> ReadReplayJobs(const std::string& itp_file, const std::string& openb_file,
                                        bool skip_bad_rows) {
  ReplayJobs j;
  if (!itp_file.empty()) {
    ItpReadOptions read_options;
    read_options.skip_bad_rows = skip_bad_rows;
    GLEANER_ASSIGN_OR_RETURN(ItpTrace itp, ReadItpJobs(itp_file, read_options));
    j.jobs = std::move(itp.jobs);
    j.skipped_rows = itp.skipped_rows;
    j.skipped_messages = std::move(itp.skipped_messages);
    return j;
  }
  OpenbJobsOptions read_options;
  read_options.skip_bad_rows = skip_bad_rows;
  GLEANER_ASSIGN_OR_RETURN(OpenbJobs openb, ReadOpenbJobs(openb_file, read_options));
  j.jobs = std::move(openb.jobs);
  j.skipped_rows = openb.skipped_rows;
  j.skipped_messages = std::move(openb.skipped_messages);
  j.left_out = ReplayLeftOut{openb.left_out_without_gpus, openb.left_out_never_scheduled};
  return j;
}

}  // namespace gleaner::sim
