#pragma once

#include <map>
#include <string>

#include "core/clock.h"
#include "core/mutex.h"
#include "server/http_message.h"
#include "store/observation_store.h"

namespace gleaner::server {

// What the store remembers of the GPUs, for the dashboard's sparklines and
// heatmaps (docs/api.md):
//   GET /v1/history[?minutes=60]   per GPU, its minute roll-ups of the last
//                                  N minutes (1 to 1440): utilization mean
//                                  and max, memory used at most, the state
//   GET /v1/profiles?kind=K        hour-of-week occupancy per GPU, user,
//                                  project or host (K = gpu, user, project,
//                                  host; the host's key is "all"): 168
//                                  shares, Monday 00:00 UTC first, null for
//                                  an hour never observed
// Bad or unknown parameters are a 400 that names them. The store and clock
// must outlive it; `store_mu` guards the store.
class HistoryApi {
 public:
  HistoryApi(store::ObservationStore& store, core::Mutex& store_mu, const core::Clock& clock)
      : store_(store), store_mu_(store_mu), clock_(clock) {}

  // `request.path` is /v1/history or /v1/profiles, with its query.
  HttpResponse Handle(const HttpRequest& request);

 private:
  HttpResponse History(const std::map<std::string, std::string>& query);
  HttpResponse Profiles(const std::map<std::string, std::string>& query);

  store::ObservationStore& store_ GLEANER_GUARDED_BY(store_mu_);
  core::Mutex& store_mu_;
  const core::Clock& clock_;
};

// The longest history one request may ask for: a day of minutes.
inline constexpr int kMaxHistoryMinutes = 1440;

}  // namespace gleaner::server
