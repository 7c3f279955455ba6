#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/units.h"

namespace gleaner::slurm {

// One Slurm job as squeue, scontrol or slurmrestd describe it: the fields
// gleaner shows and joins on. Fields a Slurm version leaves out stay empty.
struct SlurmJob {
  std::string id;        // the job id ("1234"); an array task has its own
  std::string array_id;  // "1230_4" for an array task, else empty
  std::string name;
  std::string comment;  // --comment: gleaner tags the jobs it submits
  std::string user;
  std::optional<uint32_t> uid;
  std::string account;
  std::string partition;
  std::string qos;
  std::string state;         // "RUNNING", "PENDING", ...
  std::string state_reason;  // why it is pending or ended: "Resources", "None"...
  // How a finished job ended: its exit code, or the signal that ended it.
  std::optional<int> exit_code;
  std::optional<int> exit_signal;
  std::optional<core::TimePoint> start_time;
  int restart_count = 0;
  int gpu_count = 0;  // GPUs allocated on all nodes together
  // The GPUs it holds on each node, by their GRES index (the position of
  // the device in the node's gres.conf File= list).
  std::map<std::string, std::vector<uint32_t>> gpus_by_node;

  // Whether the job holds its allocation now.
  bool HoldsResources() const {
    return state == "RUNNING" || state == "SUSPENDED" || state == "COMPLETING";
  }
  // "1234", or "1230_4 (1234)" for an array task.
  std::string DisplayId() const { return array_id.empty() ? id : array_id + " (" + id + ")"; }
};

}  // namespace gleaner::slurm
