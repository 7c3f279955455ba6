#include "cost/advice_json.h"

#include <cmath>

#include "cost/civil_date.h"

namespace gleaner::cost {
namespace {

nlohmann::ordered_json OptionJson(const AdviceOption& o, Currency currency) {
  nlohmann::ordered_json j = {
      {"kind", o.kind},
      {"expected_cost", std::round(o.expected_cost * 100) / 100},
      {"currency", CurrencyName(currency)},
      {"expected_hours", std::round(o.expected_hours * 1000) / 1000},
      {"meets_deadline", DeadlineVerdictName(o.meets_deadline)},
      {"eligible", o.eligible},
      {"source", o.source},
      {"date", o.date},
      {"stale", o.stale},
      {"low_confidence", o.low_confidence},
      {"arithmetic", o.arithmetic},
      {"notes", o.notes},
  };
  if (o.kind == "in-house") {
    j["marginal_cost_per_gpu_hour"] = std::round(o.price_per_instance_hour * 1e4) / 1e4;
    j["price_currency"] = CurrencyName(o.price_currency);
  } else {
    j["provider"] = o.provider;
    j["region"] = o.region;
    j["instance"] = o.instance;
    j["gpu_model"] = o.gpu_model;
    j["instances"] = o.instances;
    j["gpus_per_instance"] = o.gpus_per_instance;
    j["price_per_instance_hour"] = o.price_per_instance_hour;
    j["price_currency"] = CurrencyName(o.price_currency);
    j["catalog_row"] = o.origin;
  }
  return j;
}

}  // namespace

nlohmann::ordered_json AdviceToJson(const AdviceRequest& request, const Advice& advice) {
  nlohmann::ordered_json j;
  j["request"] = {
      {"gpu", request.gpu_model},
      {"count", request.gpu_count},
      {"hours", request.hours},
      {"deadline_hours", request.deadline_h ? nlohmann::ordered_json(*request.deadline_h)
                                            : nlohmann::ordered_json(nullptr)},
      {"region", request.region},
      {"single_instance", request.single_instance},
      {"as_of", FormatIsoDate(request.today_days)},
      {"cny_per_usd", request.rates.cny_per_usd},
      {"max_price_age_days", request.max_price_age_days},
  };
  j["currency"] = CurrencyName(advice.currency);
  j["options"] = nlohmann::ordered_json::array();
  for (const AdviceOption& opt : advice.options) {
    j["options"].push_back(OptionJson(opt, advice.currency));
  }
  if (advice.recommended) {
    const AdviceOption& r = advice.options[*advice.recommended];
    j["recommendation"] = {{"kind", r.kind},
                           {"provider", r.provider},
                           {"instance", r.instance},
                           {"expected_cost", std::round(r.expected_cost * 100) / 100},
                           {"currency", CurrencyName(advice.currency)},
                           {"reason", advice.recommendation}};
  } else {
    j["recommendation"] = {{"kind", nullptr}, {"reason", advice.recommendation}};
  }
  j["warnings"] = advice.warnings;
  return j;
}

}  // namespace gleaner::cost
