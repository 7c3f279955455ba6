#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"
#include "gpu/cuda/checkpoint_api.h"

namespace gleaner::gpu {

// Where a process's CUDA state is, as the driver says.
enum class CudaProcessState {
  kRunning,       // on the GPU as usual
  kLocked,        // its CUDA calls block; its memory still on the GPU
  kCheckpointed,  // its GPU memory moved to host memory; the GPU is free of it
  kFailed,        // a checkpoint or restore failed part-way
};
std::string_view CudaProcessStateName(CudaProcessState state);

// The CUDA driver's checkpoint API, opened with dlopen("libcuda.so.1") like
// NVML: parking a held-idle process moves its GPU memory to host memory
// (its CPU threads run on; its next CUDA call waits), and restoring moves
// it back (docs/held-idle.md). Needs driver 570 or later (CUDA 12.8).
// Immutable after Open; the driver serialises calls on one process.
class CudaCheckpoint {
 public:
  // kUnavailable without a library or a device; kNotSupported for a driver
  // without the checkpoint API. The message says what to do.
  static core::Result<std::unique_ptr<CudaCheckpoint>> Open(
      const std::string& library = "libcuda.so.1");
  ~CudaCheckpoint();
  CudaCheckpoint(const CudaCheckpoint&) = delete;
  CudaCheckpoint& operator=(const CudaCheckpoint&) = delete;

  int driver_version() const { return driver_version_; }  // 12080: CUDA 12.8

  core::Result<CudaProcessState> State(uint32_t pid) const;
  // Locks the process, waiting at most `lock_timeout` for the work it
  // submitted (a process inside a long kernel is not idle, and must not
  // hold gleaner up), then checkpoints it. Only a running process is
  // parked; one that fails after the lock is unlocked again, so it runs on
  // as before.
  core::Status Park(uint32_t pid, std::chrono::milliseconds lock_timeout) const;
  // Restores a checkpointed process and unlocks it. A failed restore leaves
  // it checkpointed, to be tried again: its memory is never given up.
  core::Status Restore(uint32_t pid) const;

 private:
  explicit CudaCheckpoint(void* handle) : handle_(handle) {}
  // "CUDA_ERROR_TIMEOUT (the operation timed out)", with a hint where one helps.
  std::string Describe(CUresult rc) const;

  void* handle_;
  int driver_version_ = 0;
  cuda::ErrorTextFn error_name_ = nullptr;
  cuda::ErrorTextFn error_string_ = nullptr;
  cuda::GetStateFn get_state_ = nullptr;
  cuda::LockFn lock_ = nullptr;
  cuda::CheckpointFn checkpoint_ = nullptr;
  cuda::RestoreFn restore_ = nullptr;
  cuda::UnlockFn unlock_ = nullptr;
};

}  // namespace gleaner::gpu
