#include "config/model_prices.h"

namespace gleaner::config {

sched::ModelPriceFn ModelPrices(const cost::CostSettings& settings) {
  return [settings](const std::string& gpu_name,
                    core::Bytes memory) -> std::optional<sched::ModelPrice> {
    const std::string model = settings.ModelOf(
        gpu_name, memory.count() > 0 ? std::optional<uint64_t>(memory.count()) : std::nullopt);
    const std::optional<cost::OnPremParams> params = settings.OnPremFor(model);
    const std::optional<cost::GpuSpeed> speed = settings.SpeedOf(model);
    if (!params || !speed || !cost::ValidateOnPremParams(*params).ok()) return std::nullopt;
    const double owned = cost::ComputeOnPremCost(*params).per_gpu_hour;
    return sched::ModelPrice{model,
                             settings.rates.Convert(owned, params->currency, settings.currency),
                             speed->relative_to_a100};
  };
}

}  // namespace gleaner::config
