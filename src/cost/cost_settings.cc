#include "cost/cost_settings.h"

#include "cost/gpu_names.h"

namespace gleaner::cost {

std::string CostSettings::ModelOf(std::string_view driver_name,
                                  std::optional<uint64_t> memory_total_bytes) const {
  if (auto it = gpu_models.find(std::string(driver_name)); it != gpu_models.end()) {
    return it->second;
  }
  return CatalogModelOfGpuName(driver_name, memory_total_bytes);
}

std::optional<OnPremParams> CostSettings::OnPremFor(std::string_view gpu_model) const {
  if (auto it = onprem.find(std::string(gpu_model)); it != onprem.end()) return it->second;
  return DefaultOnPremParams(gpu_model);
}

std::optional<GpuSpeed> CostSettings::SpeedOf(std::string_view gpu_model) const {
  if (auto it = speeds.find(std::string(gpu_model)); it != speeds.end()) {
    return GpuSpeed{it->second, "gleaner.toml [cost.speed]"};
  }
  return PublishedGpuSpeed(gpu_model);
}

namespace {

struct Parameter {
  std::string_view name;
  double OnPremParams::*field;
};

constexpr Parameter kParameters[] = {
    {"server_capex", &OnPremParams::server_capex},
    {"life_years", &OnPremParams::life_years},
    {"maintenance_rate_per_year", &OnPremParams::maintenance_rate_per_year},
    {"server_power_kw", &OnPremParams::server_power_kw},
    {"load_fraction", &OnPremParams::load_fraction},
    {"pue", &OnPremParams::pue},
    {"electricity_per_kwh", &OnPremParams::electricity_per_kwh},
    {"gpu_busy_w", &OnPremParams::gpu_busy_w},
    {"gpu_idle_w", &OnPremParams::gpu_idle_w},
};

}  // namespace

const std::vector<std::string_view>& OnPremParameterNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> n;
    for (const Parameter& p : kParameters) n.push_back(p.name);
    n.push_back("gpus_per_server");
    return n;
  }();
  return names;
}

core::Status SetOnPremParameter(OnPremParams& params, std::string_view name, double value) {
  if (name == "gpus_per_server") {
    params.gpus_per_server = static_cast<int>(value);
    return core::Status::Ok();
  }
  for (const Parameter& p : kParameters) {
    if (p.name == name) {
      params.*p.field = value;
      return core::Status::Ok();
    }
  }
  return core::InvalidArgument("unknown on-prem parameter \"" + std::string(name) + "\"");
}

}  // namespace gleaner::cost
