#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>

// The fake drivers' shared record of processes' CUDA states (the fake
// libcuda.so.1 writes it; the fake libnvidia-ml.so.1 reads it, so that a
// checkpointed process leaves the fake GPU). Lines of "<pid> <state>", the
// state as the driver numbers it. Test fakes only.
namespace gleaner::gpu {

inline std::map<uint32_t, int> FakeCudaStates(const std::string& path) {
  std::map<uint32_t, int> states;
  if (path.empty()) return states;
  std::ifstream in(path);
  uint32_t pid = 0;
  int state = 0;
  while (in >> pid >> state) states[pid] = state;
  return states;
}

}  // namespace gleaner::gpu
