// A fake libcuda.so.1 with the driver's checkpoint API, for tests that load
// it through gleaner's real loader (gpu::CudaCheckpoint). Each known process
// moves through the driver's states, RUNNING -> LOCKED -> CHECKPOINTED and
// back; the states live in a file that the fake libnvidia-ml.so.1 reads
// too, so a checkpointed process leaves the fake GPU (its process list and
// its memory) as it would leave a real one.
//
// Built in two variants (FAKE_CUDA_CHECKPOINT): 1, a CUDA 12.8 driver with
// the checkpoint API; 0, a CUDA 12.4 driver without it.
//
// Environment:
//   GLEANER_FAKE_CUDA_PIDS   the CUDA processes, "4242,5555"; others are
//                            not found
//   GLEANER_FAKE_CUDA_STATE  the file of states ("<pid> <state>" lines)
//   GLEANER_FAKE_CUDA_FAIL   injected failures, comma-separated:
//                            lock_timeout, checkpoint, restore, not_permitted,
//                            no_device
//   GLEANER_FAKE_CUDA_COPY_MS    each checkpoint and restore takes this long
//                                (a real driver moves 2 to 6 GB a second)
//   GLEANER_FAKE_CUDA_COPY_FILE  a file that exists while one does: a
//                                test's holder computes while it exists, as
//                                a real driver's copy runs in the holder's
//                                own process and counts as its CPU time

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "gpu/cuda/checkpoint_api.h"
#include "gpu/cuda/fake_cuda_state.h"

#ifndef FAKE_CUDA_CHECKPOINT
#error "FAKE_CUDA_CHECKPOINT must be 0 or 1"
#endif

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using gleaner::gpu::FakeCudaStates;

std::mutex mu;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool Failing(const std::string& what) {
  std::stringstream list(Env("GLEANER_FAKE_CUDA_FAIL"));
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == what) return true;
  }
  return false;
}

[[maybe_unused]] bool Known(int pid) {
  std::stringstream list(Env("GLEANER_FAKE_CUDA_PIDS"));
  std::string item;
  while (std::getline(list, item, ',')) {
    if (!item.empty() && std::atoi(item.c_str()) == pid) return true;
  }
  return false;
}

// Moves `pid` from `from` to `to`, or says why not.
[[maybe_unused]] CUresult Move(int pid, int from, int to) {
  std::lock_guard lock(mu);
  if (!Known(pid)) return CUDA_ERROR_NOT_FOUND;
  const std::string path = Env("GLEANER_FAKE_CUDA_STATE");
  std::map<uint32_t, int> states = FakeCudaStates(path);
  const int now = states.count(static_cast<uint32_t>(pid)) ? states[static_cast<uint32_t>(pid)]
                                                           : CU_PROCESS_STATE_RUNNING;
  if (now != from) return CUDA_ERROR_ILLEGAL_STATE;
  states[static_cast<uint32_t>(pid)] = to;
  std::ofstream out(path, std::ios::trunc);
  for (const auto& [p, s] : states) out << p << " " << s << "\n";
  return out ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

// A checkpoint's or restore's copy, as long as the test asks.
[[maybe_unused]] void Copy() {
  const std::string ms = Env("GLEANER_FAKE_CUDA_COPY_MS");
  if (ms.empty()) return;
  const std::string file = Env("GLEANER_FAKE_CUDA_COPY_FILE");
  if (!file.empty()) std::ofstream(file) << "copying\n";
  std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms.c_str())));
  if (!file.empty()) std::remove(file.c_str());
}

}  // namespace

EXPORT CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  return Failing("no_device") ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = FAKE_CUDA_CHECKPOINT ? 12080 : 12040;
  return CUDA_SUCCESS;
}

// What the driver calls each error, and says of it.
struct ErrorText {
  CUresult rc;
  const char* name;
  const char* text;
};
constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT",
     "the timeout specified for the wait operation has lapsed"},
};
const ErrorText& Describe(CUresult rc) {
  static constexpr ErrorText kUnknown{CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"};
  for (const ErrorText& e : kErrors) {
    if (e.rc == rc) return e;
  }
  return kUnknown;
}

EXPORT CUresult cuGetErrorName(CUresult rc, const char** name) {
  if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *name = Describe(rc).name;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorString(CUresult rc, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *text = Describe(rc).text;
  return CUDA_SUCCESS;
}

#if FAKE_CUDA_CHECKPOINT
EXPORT CUresult cuCheckpointProcessGetState(int pid, int* state) {
  if (state == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(mu);
  if (!Known(pid)) return CUDA_ERROR_NOT_FOUND;
  const auto states = FakeCudaStates(Env("GLEANER_FAKE_CUDA_STATE"));
  const auto it = states.find(static_cast<uint32_t>(pid));
  *state = it == states.end() ? CU_PROCESS_STATE_RUNNING : it->second;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuCheckpointProcessLock(int pid, CUcheckpointLockArgs* args) {
  if (args == nullptr || args->reserved0 != 0) return CUDA_ERROR_INVALID_VALUE;
  if (Failing("not_permitted")) return CUDA_ERROR_NOT_PERMITTED;
  // A process inside a long kernel: the lock waits its timeout, then gives up.
  if (Failing("lock_timeout")) return Known(pid) ? CUDA_ERROR_TIMEOUT : CUDA_ERROR_NOT_FOUND;
  return Move(pid, CU_PROCESS_STATE_RUNNING, CU_PROCESS_STATE_LOCKED);
}

EXPORT CUresult cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs* args) {
  if (args == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (Failing("checkpoint")) return CUDA_ERROR_UNKNOWN;
  Copy();
  return Move(pid, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_CHECKPOINTED);
}

EXPORT CUresult cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs* args) {
  if (args == nullptr || args->gpuPairsCount != 0) return CUDA_ERROR_INVALID_VALUE;
  if (Failing("restore")) return CUDA_ERROR_UNKNOWN;
  Copy();
  return Move(pid, CU_PROCESS_STATE_CHECKPOINTED, CU_PROCESS_STATE_LOCKED);
}

EXPORT CUresult cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs* args) {
  if (args == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return Move(pid, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_RUNNING);
}
#endif
