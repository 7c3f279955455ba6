#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"

namespace gleaner::sched {

// A host directory or file the job's container sees at `target`.
struct ContainerMount {
  std::string source;  // absolute, on the host; read as the job's user
  std::string target;  // absolute, in the container
  bool read_only = false;

  bool operator==(const ContainerMount&) const = default;
};

// Where a job's command runs: an OCI image, run by Podman as the job's user
// (rootless), or an Apptainer image file. Exactly one of the two is set.
struct ContainerSpec {
  std::string image;  // "docker.io/pytorch/pytorch:2.4", "localhost/mine:1"
  std::string sif;    // an absolute path to a .sif file
  std::vector<ContainerMount> mounts;

  bool operator==(const ContainerSpec&) const = default;
};

inline constexpr size_t kMaxContainerMounts = 64;

// Parses `--mount SRC:DST[:ro]`; the error says what was expected.
core::Result<ContainerMount> ParseContainerMount(const std::string& text);
std::string ContainerMountToString(const ContainerMount& m);

// Checks what podman and apptainer will be given: the error names the field
// and says what would be accepted.
core::Status ValidateContainerSpec(const ContainerSpec& c);

// The JSON form, {"image": ..., "mounts": ["SRC:DST:ro", ...]} or
// {"sif": ...}; FromJson rejects unknown fields and wrong types.
nlohmann::json ContainerSpecToJson(const ContainerSpec& c);
core::Result<ContainerSpec> ContainerSpecFromJson(const nlohmann::json& j);

}  // namespace gleaner::sched
