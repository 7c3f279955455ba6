#include "agent/cgroup_limits.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "agent/cgroup_files.h"
#include "core/format.h"

namespace gleaner::agent {
namespace {

// The CFS period both versions use: a job asking 1.5 CPUs may run 150 ms of
// every 100 ms, spread over its threads.
constexpr int64_t kPeriodUs = 100'000;

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }
std::string Name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool Lists(const std::string& words, const std::string& word) {
  std::istringstream in(words);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

// Turns the v2 `controller` on for the jobs under `base`: in the cgroup
// above it and in the base. cgroup v2 lets a cgroup pass controllers down
// only while it holds no process of its own (the root excepted), so this
// works where the daemon runs in a leaf beside the base (systemd's
// DelegateSubgroup=gleaner-daemon) or in the root cgroup. A daemon is never
// moved here: systemd would then find its unit's cgroup passing controllers
// down and could not start the daemon in it again.
core::Status EnableV2(const std::string& base, const std::string& controller) {
  const std::string above = Parent(base);
  if (!Lists(ReadCgroupFile(above + "/cgroup.controllers"), controller)) {
    return core::NotSupported("cgroup v2 has no " + controller + " controller for " + above +
                              " (a v1 hierarchy holds it, or it is not delegated)");
  }
  const std::string plus = "+" + controller;
  if (!Lists(ReadCgroupFile(above + "/cgroup.subtree_control"), controller) &&
      !WriteCgroupFile(above + "/cgroup.subtree_control", plus).ok()) {
    return core::NotSupported(above + " holds processes, so cgroup v2 cannot pass its " +
                              controller +
                              " controller to jobs; run gleaner in a leaf beside them "
                              "(systemd 254+: DelegateSubgroup=gleaner-daemon, docs/systemd.md)");
  }
  if (Lists(ReadCgroupFile(base + "/cgroup.subtree_control"), controller)) {
    return core::Status::Ok();
  }
  return WriteCgroupFile(base + "/cgroup.subtree_control", plus);
}

// The jobs' base in the v1 hierarchy of `controller`, made, writable; empty
// where there is none.
std::string V1Base(const std::string& controller, const std::string& leaf, bool make) {
  const std::optional<std::string> mount = CgroupMount(controller);
  const std::optional<std::string> own = OwnCgroup(controller);
  if (!mount || !own) return "";
  const std::string base = *mount + (*own == "/" ? "" : *own) + "/" + leaf;
  if (!make) return access((Parent(base) + "/cgroup.procs").c_str(), W_OK) == 0 ? base : "";
  if (mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) return "";
  return access((base + "/cgroup.procs").c_str(), W_OK) == 0 ? base : "";
}

// Makes the v1 directory for `job` under `base` (there already where cpu
// and memory share one hierarchy).
core::Result<std::string> MakeV1(const std::string& base, const std::string& job) {
  const std::string dir = base + "/" + job;
  // Another gleaner's sweep may have removed an empty base meanwhile.
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST &&
      (errno != ENOENT || (mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) ||
       mkdir(dir.c_str(), 0755) != 0)) {
    return core::Unavailable("cannot create " + dir + ": " + std::strerror(errno));
  }
  return dir;
}

}  // namespace

CgroupLimits CgroupLimits::Find(const std::string& v2_base, bool enable) {
  CgroupLimits out;
  const std::string leaf = Name(v2_base);
  std::string missing;
  for (const std::string controller : {"cpu", "memory"}) {
    Where& where = controller == "cpu" ? out.cpu_ : out.memory_;
    std::string& v1_base = controller == "cpu" ? out.cpu_v1_base_ : out.memory_v1_base_;
    const core::Status v2 =
        enable ? EnableV2(v2_base, controller)
        : Lists(ReadCgroupFile(Parent(v2_base) + "/cgroup.controllers"), controller)
            ? core::Status::Ok()
            : core::NotSupported("cgroup v2 has no " + controller + " controller here");
    if (v2.ok()) {
      where = Where::kV2;
      continue;
    }
    v1_base = V1Base(controller, leaf, enable);
    if (!v1_base.empty()) {
      where = Where::kV1;
      continue;
    }
    missing += (missing.empty() ? "" : "; ") + v2.message() + ", nor a writable v1 hierarchy";
  }
  out.why_not_ = missing;
  return out;
}

core::Result<std::vector<std::string>> CgroupLimits::Apply(const std::string& job_cgroup,
                                                           const HostShare& share) const {
  std::vector<std::string> joins;
  std::vector<std::string> made;
  const auto fail = [&](core::Status s) -> core::Result<std::vector<std::string>> {
    for (const std::string& dir : made) rmdir(dir.c_str());
    return s;
  };
  const std::string job = Name(job_cgroup);
  if (share.cpu_milli > 0 && cpu_ != Where::kNone) {
    // The kernel takes no quota under 1 ms a period.
    const int64_t quota = std::max<int64_t>(share.cpu_milli * kPeriodUs / 1000, 1000);
    if (cpu_ == Where::kV2) {
      const core::Status s = WriteCgroupFile(
          job_cgroup + "/cpu.max", std::to_string(quota) + " " + std::to_string(kPeriodUs));
      if (!s.ok()) return fail(s);
    } else {
      auto dir = MakeV1(cpu_v1_base_, job);
      if (!dir.ok()) return fail(dir.status());
      made.push_back(*dir);
      for (const core::Status& s :
           {WriteCgroupFile(*dir + "/cpu.cfs_period_us", std::to_string(kPeriodUs)),
            WriteCgroupFile(*dir + "/cpu.cfs_quota_us", std::to_string(quota))}) {
        if (!s.ok()) return fail(s);
      }
      joins.push_back(*dir + "/cgroup.procs");
    }
  }
  if (share.memory.count() > 0 && memory_ != Where::kNone) {
    const std::string bytes = std::to_string(share.memory.count());
    if (memory_ == Where::kV2) {
      if (const core::Status s = WriteCgroupFile(job_cgroup + "/memory.max", bytes); !s.ok()) {
        return fail(s);
      }
      // The limit is the job's memory, not memory plus the host's swap.
      if (access((job_cgroup + "/memory.swap.max").c_str(), F_OK) == 0) {
        if (const core::Status s = WriteCgroupFile(job_cgroup + "/memory.swap.max", "0"); !s.ok()) {
          return fail(s);
        }
      }
    } else {
      auto dir = MakeV1(memory_v1_base_, job);
      if (!dir.ok()) return fail(dir.status());
      made.push_back(*dir);
      if (const core::Status s = WriteCgroupFile(*dir + "/memory.limit_in_bytes", bytes); !s.ok()) {
        return fail(s);
      }
      // Memory and swap together, where the kernel accounts swap (it must
      // be set after the plain limit, which it may not undercut).
      if (access((*dir + "/memory.memsw.limit_in_bytes").c_str(), F_OK) == 0) {
        if (const core::Status s = WriteCgroupFile(*dir + "/memory.memsw.limit_in_bytes", bytes);
            !s.ok()) {
          return fail(s);
        }
      }
      if (joins.empty() || joins.back() != *dir + "/cgroup.procs") {
        joins.push_back(*dir + "/cgroup.procs");
      }
    }
  }
  return joins;
}

std::vector<std::string> CgroupLimits::V1Bases() const {
  std::vector<std::string> out;
  for (const std::string* base : {&cpu_v1_base_, &memory_v1_base_}) {
    if (!base->empty()) out.push_back(*base);
  }
  return out;
}

void CgroupLimits::RemoveBases() const {
  for (const std::string& base : V1Bases()) rmdir(base.c_str());
}

bool CgroupLimits::Remove(const std::string& job_cgroup) const {
  bool gone = true;
  for (const std::string* base : {&cpu_v1_base_, &memory_v1_base_}) {
    if (base->empty()) continue;
    const std::string dir = *base + "/" + Name(job_cgroup);
    if (rmdir(dir.c_str()) != 0 && errno != ENOENT) gone = false;
  }
  return gone;
}

std::string CgroupLimits::Describe() const {
  const auto where = [](Where w) {
    return w == Where::kV2 ? std::string("cgroup v2") : std::string("cgroup v1");
  };
  std::string out;
  if (cpu()) out += "cpu (" + where(cpu_) + ")";
  if (memory()) out += std::string(out.empty() ? "" : ", ") + "memory (" + where(memory_) + ")";
  if (!why_not_.empty())
    out += (out.empty() ? "" : "; ") + std::string("not enforced: ") + why_not_;
  return out;
}

std::string CgroupLimits::Unenforced(const HostShare& share) const {
  std::string out;
  if (share.cpu_milli > 0 && !cpu()) out = "cpus";
  if (share.memory.count() > 0 && !memory()) out += std::string(out.empty() ? "" : " and ") + "mem";
  if (out.empty()) return "";
  return "gleaner: this host does not enforce the job's " + out + " (" + why_not_ +
         "); the scheduler still counts them\n";
}

}  // namespace gleaner::agent
