#pragma once

#include <map>
#include <string>

#include "core/clock.h"
#include "core/mutex.h"
#include "cost/catalog.h"
#include "cost/cost_settings.h"
#include "server/caller.h"
#include "server/cost_ledger.h"
#include "server/http_message.h"
#include "store/observation_store.h"

namespace gleaner::server {

struct CostApiOptions {
  cost::Catalog catalog;  // shipped rows and the site's
  cost::CostSettings settings;
  std::map<std::string, std::string> project_of_user;
  // How much history the in-house forecast learns from.
  core::Duration forecast_lookback = kForecastLookback;
};

// Money (docs/api.md, docs/cost.md), for any authenticated caller: what
// idle, held-idle and harvested GPU time cost is shared knowledge, per
// user included, so that waste is visible.
//   GET /v1/cost/report[?since=7d|YYYY-MM-DD][&until=YYYY-MM-DD]
//                          a gleaner.cost-report/v1 document
//   GET /v1/cost/advise?gpu=MODEL&hours=H[&count=N][&deadline=48h][&region=R]
//                         [&single_instance=1]
//                          the advisor's options and recommendation, in-house
//                          timed by this host's history
// The store and clock must outlive it; `store_mu` guards the store.
class CostApi {
 public:
  CostApi(store::ObservationStore& store, core::Mutex& store_mu, const core::Clock& clock,
          CostApiOptions options)
      : store_(store), store_mu_(store_mu), clock_(clock), options_(std::move(options)) {}

  // `request.path` starts with /v1/cost.
  HttpResponse Handle(const HttpRequest& request, const Caller& caller);

 private:
  HttpResponse Report(const std::map<std::string, std::string>& query);
  HttpResponse Advise(const std::map<std::string, std::string>& query);

  store::ObservationStore& store_ GLEANER_GUARDED_BY(store_mu_);
  core::Mutex& store_mu_;
  const core::Clock& clock_;
  CostApiOptions options_;
};

}  // namespace gleaner::server
