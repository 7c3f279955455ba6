#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "slurm/slurm_job.h"

namespace gleaner::slurm {

// The jobs in a document of `squeue --json`, `scontrol show job --json` or
// slurmrestd's `GET /slurm/vX/jobs` (they share one schema). Read the way
// the versions differ: numbers plain or as {"set", "number"} (23.02 on),
// a state as a word or a list of flags, a field a version lacks left empty.
// A document whose `errors` list is not empty fails with Slurm's words
// (kUnavailable), as does text that is not a jobs document
// (kInvalidArgument). A job that cannot be read is skipped and named in
// `skipped`, so one odd job never hides the rest.
struct SlurmJobsDocument {
  std::vector<SlurmJob> jobs;
  std::vector<std::string> skipped;  // "job 12: ..." for each job left out
  std::string slurm_version;         // "22.05.8" when the document says
};
core::Result<SlurmJobsDocument> ParseSlurmJobs(std::string_view text);

}  // namespace gleaner::slurm
