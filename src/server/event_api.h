#pragma once

#include <map>
#include <string>

#include "core/clock.h"
#include "core/mutex.h"
#include "server/caller.h"
#include "server/http_message.h"
#include "store/event_store.h"

namespace gleaner::server {

// The history (docs/events.md):
//   GET /v1/events            a page of events, oldest first: ?since=7d (an
//                             age: s, m, h or d), ?user=, ?kind=, ?job=,
//                             ?after=ID, ?limit=N; "next" names the next
//                             page's after. Root reads everyone's; others
//                             their own.
//   GET /v1/jobs/ID/events    one job's, for its owner or root (JobApi
//                             checks, then asks JobEvents).
// Each listing reads one bounded page under `store_mu`: a long history
// never holds the store. Thread-safe.
class EventApi {
 public:
  EventApi(store::EventStore& events, core::Mutex& store_mu, const core::Clock& clock)
      : events_(events), store_mu_(store_mu), clock_(clock) {}

  HttpResponse List(const HttpRequest& request, const Caller& caller);
  HttpResponse JobEvents(sched::JobId job, const std::string& query);

 private:
  HttpResponse Page(store::EventQuery query);

  store::EventStore& events_ GLEANER_GUARDED_BY(store_mu_);
  core::Mutex& store_mu_;
  const core::Clock& clock_;
};

nlohmann::json EventToJson(const store::EventRecord& e);

// "90s", "30m", "24h", "7d", or bare seconds.
core::Result<core::Duration> ParseAge(const std::string& text);

}  // namespace gleaner::server
