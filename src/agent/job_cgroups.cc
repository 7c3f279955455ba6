#include "agent/job_cgroups.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/cgroup_files.h"

namespace gleaner::agent {

core::Result<JobCgroups> JobCgroups::Open(const std::string& leaf) {
  const std::optional<std::string> mount = CgroupMount();
  if (!mount) return core::NotSupported("no cgroup2 file system is mounted");
  const std::optional<std::string> own = OwnCgroup();
  if (!own) return core::NotSupported("this process has no cgroup v2 path");
  // A daemon that systemd starts in a leaf of its unit's cgroup
  // (DelegateSubgroup=gleaner-daemon) puts the jobs beside that leaf, where
  // the unit's cgroup can pass them controllers (CgroupLimits).
  std::string delegated = *own == "/" ? "" : *own;
  if (delegated.ends_with("/" + std::string(kDaemonLeaf))) {
    delegated.resize(delegated.size() - std::string(kDaemonLeaf).size() - 1);
  }
  std::string base = *mount + delegated + "/" + leaf;
  if (mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) {
    return core::NotSupported("cannot create " + base + ": " + std::strerror(errno));
  }
  // What cannot be used is not left behind (an empty directory, removable).
  if (access((base + "/cgroup.procs").c_str(), W_OK) != 0) {
    rmdir(base.c_str());
    return core::NotSupported(base + " is not a writable cgroup");
  }
  if (access((base + "/cgroup.kill").c_str(), F_OK) != 0) {
    rmdir(base.c_str());
    return core::NotSupported("the kernel has no cgroup.kill (Linux 5.14 or newer needed)");
  }
  return JobCgroups(*mount, std::move(base));
}

core::Status JobCgroups::RemoveBase() const {
  limits_.RemoveBases();
  if (rmdir(base_.c_str()) == 0 || errno == ENOENT) return core::Status::Ok();
  return core::FailedPrecondition("removing " + base_ + ": " + std::strerror(errno));
}

core::Result<std::string> JobCgroups::Create(sched::JobId id) const {
  // Unique across launches and restarts: the id and the launch's time.
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string path =
      base_ + "/job-" + std::to_string(id) + "-" +
      std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
  // Another gleaner's sweep may have removed the base while it was empty.
  if (mkdir(path.c_str(), 0755) != 0 &&
      (errno != ENOENT || (mkdir(base_.c_str(), 0755) != 0 && errno != EEXIST) ||
       mkdir(path.c_str(), 0755) != 0)) {
    return core::Unavailable("cannot create " + path + ": " + std::strerror(errno));
  }
  return path;
}

std::optional<std::string> JobCgroups::Of(pid_t pid) const {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  const std::string leaf = base_.substr(base_.rfind('/'));  // "/gleaner-jobs-..."
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    // The process's path is relative to the mount. Its job's cgroup is
    // .../<leaf>/job-ID-LAUNCH, under whatever cgroup the gleaner that
    // launched it ran in (not necessarily this one's).
    const std::string rel = line.substr(3);
    const size_t at = rel.find(leaf + "/job-");
    if (at == std::string::npos) return std::nullopt;
    const size_t end = rel.find('/', at + leaf.size() + 1);
    return mount_ + rel.substr(0, end);
  }
  return std::nullopt;
}

std::vector<std::string> JobCgroups::List() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(base_, ec)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("job-", 0) == 0) {
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// SweepStaleBases in the hierarchy where `ours` is this daemon's base.
int SweepBasesBeside(const std::filesystem::path& ours, std::chrono::seconds min_age) {
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const int64_t min_age_us = std::chrono::duration_cast<std::chrono::microseconds>(min_age).count();
  int removed = 0;
  std::error_code ec;
  for (const auto& base : std::filesystem::directory_iterator(ours.parent_path(), ec)) {
    const std::string name = base.path().filename().string();
    if (!name.starts_with("gleaner-jobs-") || base.path() == ours || !base.is_directory(ec)) {
      continue;
    }
    std::error_code inner;
    for (const auto& job : std::filesystem::directory_iterator(base.path(), inner)) {
      // job-ID-LAUNCH: LAUNCH is when it was made, in microseconds.
      const std::string job_name = job.path().filename().string();
      const size_t dash = job_name.rfind('-');
      if (!job_name.starts_with("job-") || dash == std::string::npos) continue;
      const int64_t launched = std::strtoll(job_name.c_str() + dash + 1, nullptr, 10);
      if (now_us - launched < min_age_us) continue;
      if (rmdir(job.path().c_str()) == 0) ++removed;  // EBUSY while a process is in it
    }
    if (rmdir(base.path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace

int JobCgroups::SweepStaleBases(std::chrono::seconds min_age) const {
  int removed = SweepBasesBeside(base_, min_age);
  // Their v1 limit directories, where this host has them.
  for (const std::string& v1 : limits_.V1Bases()) removed += SweepBasesBeside(v1, min_age);
  return removed;
}

core::Status JobCgroups::Kill(const std::string& path) {
  return WriteCgroupFile(path + "/cgroup.kill", "1");
}

core::Status JobCgroups::Remove(const std::string& path) const {
  if (rmdir(path.c_str()) == 0 || errno == ENOENT) {
    // Its v1 directories held the same processes; one still being torn
    // down is removed on a later call.
    if (!limits_.Remove(path)) {
      return core::FailedPrecondition(path + "'s v1 limit directories still have processes");
    }
    return core::Status::Ok();
  }
  if (errno == EBUSY) return core::FailedPrecondition(path + " still has processes");
  return core::Unavailable("removing " + path + ": " + std::strerror(errno));
}

bool JoinCgroup(const char* procs_file) {
  const int fd = open(procs_file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, "0", 1) == 1;  // "0": the writing process itself
  close(fd);
  return ok;
}

}  // namespace gleaner::agent
