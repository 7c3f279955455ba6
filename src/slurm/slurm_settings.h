#pragma once

#include <string>

#include "core/units.h"
#include "slurm/idle_actions.h"
#include "slurm/idle_alerts.h"

namespace gleaner::slurm {

// [slurm] in gleaner.toml: where gleaner asks Slurm about its jobs
// (docs/slurm.md).
struct SlurmSettings {
  bool enabled = false;
  std::string node;               // this host's Slurm node name; empty: the short hostname
  std::string squeue = "squeue";  // the program asked when there is no slurmrestd
  std::string sbatch = "sbatch";
  std::string scancel = "scancel";
  std::string scontrol = "scontrol";
  std::string conf;  // slurm.conf for Slurm's commands (SLURM_CONF); empty: Slurm's default
  // "http://127.0.0.1:6820": ask slurmrestd (JWT) instead of squeue.
  std::string slurmrestd_url;
  std::string token_file;       // holds the JWT; read at every call, so it can be renewed
  std::string user = "root";    // whom the token names (X-SLURM-USER-NAME)
  std::string api = "v0.0.38";  // slurmrestd's OpenAPI plugin version
  core::Duration poll_interval = std::chrono::seconds(30);
  core::Duration timeout = std::chrono::seconds(10);
  // Alerts to the owners of jobs whose GPUs sit unused; off when
  // `idle_alerts` is false.
  bool idle_alerts = true;
  IdleAllocationRule idle_alert;
  // Opt-in: then requeue or cancel jobs that keep every GPU unused.
  IdleActionRule idle_action;

  // Bridge mode: gleaner's jobs placed on this host run as Slurm jobs,
  // submitted with sbatch as their users into a preemptible partition, so
  // that Slurm, not gleaner, runs and requeues them (docs/slurm.md).
  struct Bridge {
    bool enabled = false;
    std::string partition;  // required: the scavenger partition
    std::string qos;        // optional
    std::string account;    // optional; empty: the user's default account
  } bridge;
};

}  // namespace gleaner::slurm
