#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

#include "core/clock.h"

namespace gleaner::cli {

// `gleaner slurm jobs` (docs/slurm.md): the Slurm jobs holding this host's
// GPUs, with their GPU-hours allocated, used and unused and what the unused
// ones cost, by job, user and account.
struct SlurmJobsOptions {
  bool json = false;
  std::string config;  // default DATA_DIR/gleaner.toml
  std::string data_dir;
};

CLI::App* AddSlurmCommand(CLI::App& app, SlurmJobsOptions& options);
int RunSlurmJobs(const SlurmJobsOptions& options, core::TimePoint now, std::ostream& out,
                 std::ostream& err);

}  // namespace gleaner::cli
