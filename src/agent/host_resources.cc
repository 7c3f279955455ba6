#include "agent/host_resources.h"

#include <sched.h>

#include <fstream>
#include <sstream>
#include <string>

namespace gleaner::agent {
namespace {

int64_t AffinityCpuMilli() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return int64_t{CPU_COUNT(&set)} * 1000;
}

core::Bytes MemTotal() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    // "MemTotal:       263842476 kB"
    if (!line.starts_with("MemTotal:")) continue;
    std::istringstream fields(line.substr(9));
    uint64_t kib = 0;
    std::string unit;
    if (fields >> kib >> unit && unit == "kB") return core::Bytes::KiB(kib);
  }
  return core::Bytes();
}

}  // namespace

sched::HostResources HostResourcesForJobs(const sched::HostResources& configured) {
  sched::HostResources r = configured;
  if (r.cpu_milli == 0) r.cpu_milli = AffinityCpuMilli();
  if (r.memory.count() == 0) r.memory = MemTotal();
  return r;
}

}  // namespace gleaner::agent
