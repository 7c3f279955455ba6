#include "daemon/host_setup.h"

#include <filesystem>

#include "core/format.h"
#include "core/sha256.h"
#include "cost/gpu_hour_prices.h"

namespace gleaner::daemon {

std::optional<agent::JobCgroups> UseJobCgroups(const std::string& data_dir,
                                               agent::Executor& executor, const cluster::Log& log) {
  const std::string leaf =
      "gleaner-jobs-" +
      core::Sha256Hex(std::filesystem::absolute(data_dir).lexically_normal().string())
          .substr(0, 12);
  auto cgroups = agent::JobCgroups::Open(leaf);
  if (!cgroups.ok()) {
    log("jobs run without cgroups of their own (" + cgroups.status().message() +
        "); their process groups hold them");
    return std::nullopt;
  }
  log("each job gets a cgroup of its own under " + cgroups->base());
  cgroups->EnableLimits();
  log("a job's --cpus and --mem are held by " + cgroups->limits().Describe());
  if (const int swept = cgroups->SweepStaleBases(); swept > 0) {
    log("removed " + std::to_string(swept) +
        " empty job cgroup(s) that stopped gleaners left beside it");
  }
  executor.UseCgroups(*cgroups);
  return std::move(cgroups).value();
}

std::unique_ptr<gpu::CudaCheckpoint> OpenCudaForParking(const observe::ParkingConfig& parking,
                                                        const std::string& cuda_library,
                                                        const std::string& state_path,
                                                        const cluster::Log& log) {
  std::error_code ec;
  const bool parked_before = std::filesystem::exists(state_path, ec);
  if (!parking.enabled && !parked_before) return nullptr;
  auto cuda = gpu::CudaCheckpoint::Open(cuda_library);
  if (!cuda.ok()) {
    log("warning: " + cuda.status().message() +
        (parking.enabled ? "; no holder is parked ([parking] in gleaner.toml)"
                         : "; holders parked before cannot be restored by gleaner"));
    return nullptr;
  }
  if (parking.enabled) {
    log("parking holders held idle for " + core::FormatDuration(parking.park_idle_timeout) +
        ", after " + core::FormatDuration(parking.notice) + " of notice (CUDA driver " +
        std::to_string((*cuda)->driver_version() / 1000) + "." +
        std::to_string((*cuda)->driver_version() % 1000 / 10) + ")");
  }
  return std::move(cuda).value();
}

void ResumeFromHistory(agent::Sampler& sampler, const cluster::Log& log) {
  auto resumed = sampler.ResumeFromStore();
  if (!resumed.ok()) {
    log("cannot resume from the stored history (" + resumed.status().message() +
        "); GPUs are watched afresh");
    return;
  }
  if (resumed->gpus > 0) {
    log("resumed " + std::to_string(resumed->gpus) + " GPU(s) from up to " +
        core::FormatDuration(resumed->longest) +
        " of stored minutes, so verdicts go on from that history");
  }
  if (resumed->pause_model) log("restored what was learned about pauses");
}

// What an owned GPU-hour of each of the host's GPU models costs, for the
// idle-cost gauge; models that cannot be priced are left out.
agent::IdleCostPrices IdleCostPricesOf(const std::vector<gpu::GpuSnapshot>& gpus,
                                       const cost::Catalog& catalog,
                                       const cost::CostSettings& site) {
  agent::IdleCostPrices prices;
  prices.currency = std::string(cost::CurrencyName(site.currency));
  for (const gpu::GpuSnapshot& g : gpus) {
    if (!g.name.has_value() || prices.owned_per_gpu_hour.count(g.name.value())) continue;
    const std::optional<uint64_t> memory =
        g.memory_total.has_value() ? std::optional<uint64_t>(g.memory_total.value().count())
                                   : std::nullopt;
    const std::string model = site.ModelOf(g.name.value(), memory);
    const cost::GpuHourPrices p =
        cost::PriceGpuHours(model, catalog, site.OnPremFor(model), site.currency, site.rates);
    if (p.owned_per_gpu_hour) prices.owned_per_gpu_hour[g.name.value()] = *p.owned_per_gpu_hour;
  }
  return prices;
}

agent::SamplerOptions SamplerOptionsOf(const config::GleanerConfig& config,
                                       const std::string& host) {
  agent::SamplerOptions o;
  o.interval = config.sample_interval;
  o.retention = config.retention;
  o.idle = config.idle;
  o.colocation = config.colocation;
  o.lend_allow = config.lend_allow;
  o.project_of_user = config.project_of_user;
  o.host = host;
  return o;
}

}  // namespace gleaner::daemon
