#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "store/job_store.h"

namespace gleaner::server {

// How much of the queue one user, and one project, may hold: jobs that
// have not ended (each task of an array counts) and their stored specs'
// bytes. 0 is no limit. [limits] in gleaner.toml; docs/security.md.
struct SubmitLimits {
  int64_t jobs_per_user = 10'000;
  int64_t spec_bytes_per_user = int64_t{512} << 20;
  int64_t jobs_per_project = 50'000;
  int64_t spec_bytes_per_project = int64_t{2} << 30;
};

// Admits submits against SubmitLimits, for one commit: what the store
// holds is read once per user and project, and what this commit has
// admitted so far is added to it, so a batch cannot pass a limit that
// each of its jobs alone stays within. The store must be locked while
// it is used.
class SubmitQuota {
 public:
  SubmitQuota(store::JobStore& jobs, const SubmitLimits& limits) : jobs_(jobs), limits_(limits) {}

  // OK (and counted), or kResourceExhausted naming the limit, what is
  // held and how to get under it.
  core::Status Admit(const store::NewJob& job);

 private:
  store::JobStore& jobs_;
  const SubmitLimits& limits_;
  std::map<uint32_t, store::ActiveUsage> users_;
  std::map<std::string, store::ActiveUsage> projects_;
};

}  // namespace gleaner::server
