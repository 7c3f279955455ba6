#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/executor.h"
#include "agent/host_metrics.h"
#include "agent/job_cgroups.h"
#include "agent/sampler.h"
#include "cluster/log.h"
#include "config/config_file.h"
#include "cost/catalog.h"
#include "cost/cost_settings.h"
#include "gpu/cuda/cuda_checkpoint.h"
#include "gpu/gpu_backend.h"
#include "observe/parking.h"

// What a host's daemon (`gleaner up`, `monitor`, `agent`) sets up beside
// its sampler: job cgroups, the CUDA driver for parking, the history it
// resumes from, the prices of its idle GPUs. Each says in `log` what it did.
namespace gleaner::daemon {

// Gives each job a cgroup of its own where cgroup v2 allows, one directory
// per data directory (several gleaners on a host never sweep each other's
// jobs); says which it is. The returned cgroups' base is removed on exit.
std::optional<agent::JobCgroups> UseJobCgroups(const std::string& data_dir,
                                               agent::Executor& executor, const cluster::Log& log);

// The CUDA driver's checkpoint API for parking holders, where [parking] is
// enabled or `state_path` records holders parked before a restart (they
// must come back whatever the config says now); null, saying why, where
// it is not wanted or cannot be opened.
std::unique_ptr<gpu::CudaCheckpoint> OpenCudaForParking(const observe::ParkingConfig& parking,
                                                        const std::string& cuda_library,
                                                        const std::string& state_path,
                                                        const cluster::Log& log);

// Resumes the sampler's verdicts and pause model from the store
// (Sampler::ResumeFromStore) and says what it resumed, or why not.
void ResumeFromHistory(agent::Sampler& sampler, const cluster::Log& log);

// What a host's sampler takes from the config, as `host`.
agent::SamplerOptions SamplerOptionsOf(const config::GleanerConfig& config,
                                       const std::string& host);

// What an owned GPU-hour of each of the host's GPU models costs, for the
// idle-cost gauge; models that cannot be priced are left out.
agent::IdleCostPrices IdleCostPricesOf(const std::vector<gpu::GpuSnapshot>& gpus,
                                       const cost::Catalog& catalog,
                                       const cost::CostSettings& site);

}  // namespace gleaner::daemon
