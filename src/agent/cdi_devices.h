#pragma once

#include <set>
#include <string>
#include <vector>

namespace gleaner::agent {

// Where the Container Device Interface looks for specs, as podman does.
inline const std::vector<std::string> kCdiSpecDirs = {"/etc/cdi", "/var/run/cdi"};

// The names of the nvidia.com/gpu devices that the CDI specs (*.json, *.yaml)
// in `dirs` define. nvidia-ctk cdi generate names each GPU by its index and
// its UUID; a container gets a GPU with --device nvidia.com/gpu=NAME.
std::set<std::string> CdiGpuDevices(const std::vector<std::string>& dirs = kCdiSpecDirs);

}  // namespace gleaner::agent
