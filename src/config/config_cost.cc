// gleaner.toml's [cost] section.
#include <filesystem>
#include <optional>

#include "config/config_sections.h"
#include "config/toml_fields.h"

namespace gleaner::config {
namespace {

using core::Status;

Status ReadOnPrem(const std::string& path, const toml::table& t, cost::CostSettings* c) {
  for (const auto& [model, node] : t) {
    const std::string p = "cost.onprem." + std::string(model.str()) + ".";
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      return Error(path, node, p, "expected a table: [cost.onprem.\"MODEL\"]");
    }
    const std::optional<cost::OnPremParams> defaults = cost::DefaultOnPremParams(model.str());
    cost::OnPremParams params = defaults.value_or(cost::OnPremParams{});
    params.gpu_model = std::string(model.str());
    std::string given;
    for (const auto& [key, value] : *table) {
      if (key.str() == "currency") {
        const auto currency = cost::ParseCurrency(value.value<std::string>().value_or(""));
        if (!currency) return Error(path, value, p + "currency", "expected \"USD\" or \"CNY\"");
        params.currency = *currency;
      } else {
        const std::optional<double> v = value.value<double>();
        if (!v) return Error(path, value, p + std::string(key.str()), "expected a number");
        if (Status s = cost::SetOnPremParameter(params, key.str(), *v); !s.ok()) {
          std::string names = "currency";
          for (std::string_view n : cost::OnPremParameterNames()) names += ", " + std::string(n);
          return Error(path, value, p + std::string(key.str()),
                       "unknown key; expected one of: " + names);
        }
      }
      given += (given.empty() ? "" : ", ") + std::string(key.str());
    }
    if (!defaults) {
      for (const char* needed : {"server_capex", "server_power_kw", "gpu_busy_w", "gpu_idle_w"}) {
        if (table->get(needed) == nullptr) {
          return Error(path, node, p + needed,
                       "required: " + std::string(model.str()) + " has no on-prem defaults");
        }
      }
    }
    if (Status s = cost::ValidateOnPremParams(params); !s.ok()) {
      return Error(path, node, p, s.message());
    }
    params.source = "gleaner.toml (" + given + ")" +
                    (defaults ? "; otherwise " + defaults->source : std::string());
    c->onprem[params.gpu_model] = std::move(params);
  }
  return Status::Ok();
}

}  // namespace

Status ReadCost(const std::string& path, const toml::table& t, cost::CostSettings* c) {
  const std::string p = "cost.";
  GLEANER_RETURN_IF_ERROR(CheckKeys(path, t, p,
                                    {"currency", "cny_per_usd", "max_price_age_days", "catalogs",
                                     "gpu_models", "onprem", "speed"}));
  if (const toml::node* n = t.get("currency")) {
    const auto currency = cost::ParseCurrency(n->value<std::string>().value_or(""));
    if (!currency) return Error(path, *n, p + "currency", "expected \"USD\" or \"CNY\"");
    c->currency = *currency;
  }
  GLEANER_RETURN_IF_ERROR(Number(path, t, p, "cny_per_usd", 0.001, 1e6, &c->rates.cny_per_usd));
  double age = static_cast<double>(c->max_price_age_days);
  GLEANER_RETURN_IF_ERROR(Number(path, t, p, "max_price_age_days", 1, 36500, &age));
  c->max_price_age_days = static_cast<int64_t>(age);
  GLEANER_RETURN_IF_ERROR(Strings(path, t, p, "catalogs", &c->catalog_files));
  // A relative path is the config file's neighbour, wherever gleaner runs.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (std::string& file : c->catalog_files) {
    if (std::filesystem::path(file).is_relative()) file = (dir / file).string();
  }
  if (const toml::node* n = t.get("gpu_models")) {
    const toml::table* models = n->as_table();
    if (models == nullptr) return Error(path, *n, p + "gpu_models", "expected a table");
    for (const auto& [name, model] : *models) {
      std::optional<std::string> m = model.value<std::string>();
      if (!m || m->empty()) {
        return Error(path, model, p + "gpu_models." + std::string(name.str()),
                     "expected a catalog model name such as \"H100-80GB-SXM\"");
      }
      c->gpu_models[std::string(name.str())] = *m;
    }
  }
  if (const toml::node* n = t.get("onprem")) {
    const toml::table* onprem = n->as_table();
    if (onprem == nullptr) return Error(path, *n, p + "onprem", "expected [cost.onprem.\"MODEL\"]");
    GLEANER_RETURN_IF_ERROR(ReadOnPrem(path, *onprem, c));
  }
  if (const toml::node* n = t.get("speed")) {
    const toml::table* speeds = n->as_table();
    if (speeds == nullptr) return Error(path, *n, p + "speed", "expected [cost.speed]");
    for (const auto& [name, node] : *speeds) {
      const std::optional<double> v = node.value<double>();
      if (!v || !(*v > 0 && *v <= 100)) {
        return Error(path, node, p + "speed." + std::string(name.str()),
                     "expected the model's speed beside an A100's, above 0 and at most 100 "
                     "(2 for twice an A100's work per hour)");
      }
      c->speeds[std::string(name.str())] = *v;
    }
  }
  return Status::Ok();
}

}  // namespace gleaner::config
