#pragma once

#include <signal.h>

#include <filesystem>

#include "daemon/local_cluster.h"

// What the daemon tests' rigs share.
namespace gleaner::daemon {

// A LocalCluster whose jobs' logs go to DIR/logs and whose agent keeps its
// state in DIR/agent-jobs.json.
inline LocalClusterOptions ClusterOptionsIn(const std::filesystem::path& dir) {
  LocalClusterOptions o;
  o.log_dir = (dir / "logs").string();
  o.state_path = (dir / "agent-jobs.json").string();
  return o;
}

// A job that prints "ready", and on its checkpoint signal (SIGUSR1)
// "checkpoint", then exits 0; 20 s of grace.
inline sched::JobSpec CheckpointingJob() {
  sched::JobSpec spec;
  spec.command = {"sh", "-c",
                  "trap 'echo checkpoint; exit 0' USR1; echo ready; "
                  "while true; do sleep 0.02; done"};
  spec.working_dir = "/tmp";
  spec.checkpoint_signal = SIGUSR1;
  spec.grace = core::Seconds(20);
  return spec;
}

}  // namespace gleaner::daemon
