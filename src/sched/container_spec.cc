#include "sched/container_spec.h"

#include <algorithm>

#include "sched/job_spec.h"

namespace gleaner::sched {
namespace {

core::Status Bad(const std::string& field, const std::string& what) {
  return core::InvalidArgument("container " + field + ": " + what);
}

bool HasSpaceOrControl(const std::string& text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
}

// A mount's path: absolute, printable, no space, and without the ':' and ','
// that podman's -v and apptainer's --bind take as separators.
core::Status CheckMountPath(const std::string& field, const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return Bad(field, "must be an absolute path, got \"" + path.substr(0, 256) + "\"");
  }
  if (path.size() > kMaxPathBytes) {
    return Bad(field, "longer than " + std::to_string(kMaxPathBytes) + " bytes");
  }
  if (HasSpaceOrControl(path) || path.find_first_of(":,") != std::string::npos) {
    return Bad(field, "\"" + path.substr(0, 256) +
                          "\" holds a space, a control character, ':' or ','; podman and "
                          "apptainer cannot mount such a path");
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<ContainerMount> ParseContainerMount(const std::string& text) {
  ContainerMount m;
  std::string rest = text;
  if (rest.size() > 3 && rest.ends_with(":ro")) {
    m.read_only = true;
    rest.resize(rest.size() - 3);
  } else if (rest.size() > 3 && rest.ends_with(":rw")) {
    rest.resize(rest.size() - 3);
  }
  const size_t colon = rest.find(':');
  if (colon == std::string::npos) {
    return Bad("mount", "expected SOURCE:TARGET[:ro], like /data:/data:ro, got \"" +
                            text.substr(0, 256) + "\"");
  }
  m.source = rest.substr(0, colon);
  m.target = rest.substr(colon + 1);
  GLEANER_RETURN_IF_ERROR(CheckMountPath("mount source", m.source));
  GLEANER_RETURN_IF_ERROR(CheckMountPath("mount target", m.target));
  return m;
}

std::string ContainerMountToString(const ContainerMount& m) {
  return m.source + ":" + m.target + (m.read_only ? ":ro" : "");
}

core::Status ValidateContainerSpec(const ContainerSpec& c) {
  if (c.image.empty() == c.sif.empty()) {
    return Bad("image", "give either an OCI image (--image) or an Apptainer file (--sif), not " +
                            std::string(c.image.empty() ? "neither" : "both"));
  }
  if (!c.image.empty()) {
    // An image reference never starts with '-' (podman would take it for
    // an option) and holds no space or control character.
    if (c.image.size() > kMaxPathBytes || c.image[0] == '-' || HasSpaceOrControl(c.image)) {
      return Bad("image", "not an image reference (like docker.io/library/ubuntu:24.04)");
    }
  }
  if (!c.sif.empty()) {
    if (c.sif[0] != '/') return Bad("sif", "must be an absolute path to a .sif file");
    if (c.sif.size() > kMaxPathBytes || HasSpaceOrControl(c.sif)) {
      return Bad("sif", "not a path apptainer can be given (a space or control character)");
    }
  }
  if (c.mounts.size() > kMaxContainerMounts) {
    return Bad("mounts", std::to_string(c.mounts.size()) + " mounts; at most " +
                             std::to_string(kMaxContainerMounts));
  }
  for (const ContainerMount& m : c.mounts) {
    GLEANER_RETURN_IF_ERROR(CheckMountPath("mount source", m.source));
    GLEANER_RETURN_IF_ERROR(CheckMountPath("mount target", m.target));
  }
  return core::Status::Ok();
}

nlohmann::json ContainerSpecToJson(const ContainerSpec& c) {
  nlohmann::json j = nlohmann::json::object();
  if (!c.image.empty()) j["image"] = c.image;
  if (!c.sif.empty()) j["sif"] = c.sif;
  if (!c.mounts.empty()) {
    j["mounts"] = nlohmann::json::array();
    for (const ContainerMount& m : c.mounts) j["mounts"].push_back(ContainerMountToString(m));
  }
  return j;
}

core::Result<ContainerSpec> ContainerSpecFromJson(const nlohmann::json& j) {
  if (!j.is_object()) {
    return core::InvalidArgument(
        "container: an object like {\"image\": \"localhost/mine:1\", \"mounts\": "
        "[\"/data:/data\"]}");
  }
  ContainerSpec c;
  for (const auto& [key, value] : j.items()) {
    if (key == "image" || key == "sif") {
      if (!value.is_string()) return Bad(key, "a string");
      (key == "image" ? c.image : c.sif) = value.get<std::string>();
    } else if (key == "mounts") {
      if (!value.is_array()) return Bad("mounts", "a list of \"SOURCE:TARGET[:ro]\"");
      for (const nlohmann::json& m : value) {
        if (!m.is_string()) return Bad("mounts", "a list of \"SOURCE:TARGET[:ro]\"");
        GLEANER_ASSIGN_OR_RETURN(ContainerMount mount, ParseContainerMount(m.get<std::string>()));
        c.mounts.push_back(std::move(mount));
      }
    } else {
      return Bad(key, "unknown field; known fields: image, mounts, sif");
    }
  }
  return c;
}

}  // namespace gleaner::sched
