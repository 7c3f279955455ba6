#pragma once

#include <map>
#include <string>

#include "core/result.h"
#include "store/job_store.h"

namespace gleaner::server {

// The most jobs one page of GET /v1/jobs holds, and how many when the
// request does not say: a page is read under the store's lock, so its size
// bounds how long one listing can keep every other request waiting.
inline constexpr int64_t kMaxJobPage = 1000;
inline constexpr int64_t kDefaultJobPage = 500;

// GET /v1/jobs's query as a store query (docs/api.md):
//   state=queued,held,...  these states; all=1: every state; neither: the
//                          jobs that have not ended
//   user=NAME              that user's jobs only
//   limit=N                at most N (1..kMaxJobPage; kDefaultJobPage)
//   after=ID               only jobs with a greater id (the last page's "next")
// InvalidArgument naming what is wrong.
core::Result<store::JobQuery> ParseJobListQuery(const std::map<std::string, std::string>& query);

}  // namespace gleaner::server
