#include "server/cost_api.h"

#include <cstdlib>

#include "cost/advice_json.h"
#include "cost/advisor.h"
#include "cost/civil_date.h"
#include "server/cost_ledger.h"
#include "server/routing.h"

namespace gleaner::server {

HttpResponse CostApi::Handle(const HttpRequest& request, const Caller&) {
  std::string query_text;
  const std::vector<std::string> seg = Segments(request.path, &query_text);
  if (seg.size() != 3) return NoSuchEndpoint(request);
  if (request.method != "GET") return WrongMethod(request);
  auto query = ParseQuery(query_text);
  if (!query.ok()) return ErrorResponse(query.status());
  if (seg[2] == "report") return Report(*query);
  if (seg[2] == "advise") return Advise(*query);
  return NoSuchEndpoint(request);
}

HttpResponse CostApi::Report(const std::map<std::string, std::string>& query) {
  if (auto s = OnlyKnownParameters(query, {"since", "until"}); !s.ok()) return ErrorResponse(s);
  auto span =
      ParseReportSpan(QueryValue(query, "since", "7d"), QueryValue(query, "until"), clock_.Now());
  if (!span.ok()) return ErrorResponse(span.status());
  core::Result<LedgerReport> ledger = [&] {
    core::MutexLock lock(store_mu_);
    return BuildLedgerReport(store_, options_.catalog, options_.settings, options_.project_of_user,
                             span->first, span->second);
  }();
  if (!ledger.ok()) return ErrorResponse(ledger.status());
  return OrderedJson(200, LedgerReportToJson(*ledger));
}

HttpResponse CostApi::Advise(const std::map<std::string, std::string>& query) {
  if (auto s = OnlyKnownParameters(
          query, {"gpu", "count", "hours", "deadline", "region", "single_instance"});
      !s.ok()) {
    return ErrorResponse(s);
  }
  cost::AdviceRequest req;
  req.gpu_model = QueryValue(query, "gpu");
  if (req.gpu_model.empty()) {
    return ErrorResponse(core::InvalidArgument("gpu is required, e.g. ?gpu=A100-80GB&hours=24"));
  }
  const std::optional<double> hours = cost::ParseHours(QueryValue(query, "hours"));
  if (!hours) return ErrorResponse(core::InvalidArgument("hours: expected a number above 0"));
  req.hours = *hours;
  const std::string count = QueryValue(query, "count", "1");
  char* end = nullptr;
  const long n = std::strtol(count.c_str(), &end, 10);
  if (count.empty() || *end != '\0' || n < 1 || n > 1'000'000) {
    return ErrorResponse(
        core::InvalidArgument("count: expected a whole number of GPUs, 1 or more"));
  }
  req.gpu_count = static_cast<int>(n);
  if (const std::string d = QueryValue(query, "deadline"); !d.empty()) {
    req.deadline_h = cost::ParseHours(d);
    if (!req.deadline_h) {
      return ErrorResponse(core::InvalidArgument("deadline: expected a span such as 48h or 2d"));
    }
  }
  req.region = QueryValue(query, "region");
  req.single_instance = QueryValue(query, "single_instance") == "1";
  req.currency = options_.settings.currency;
  req.rates = options_.settings.rates;
  req.max_price_age_days = options_.settings.max_price_age_days;
  const core::TimePoint now = clock_.Now();
  req.today_days = cost::DaysFromUnixSeconds(core::ToUnixMicros(now) / 1'000'000);
  if (options_.settings.onprem.count(req.gpu_model)) {
    req.onprem = options_.settings.OnPremFor(req.gpu_model);
  }
  {
    core::MutexLock lock(store_mu_);
    auto forecast =
        ForecastIdleGpus(store_, options_.settings, req.gpu_model, now, options_.forecast_lookback);
    if (!forecast.ok()) return ErrorResponse(forecast.status());
    req.idle_forecast = *forecast;
  }
  core::Result<cost::Advice> advice = cost::Advise(options_.catalog, req);
  if (!advice.ok()) return ErrorResponse(advice.status());
  return OrderedJson(200, cost::AdviceToJson(req, *advice));
}

}  // namespace gleaner::server
