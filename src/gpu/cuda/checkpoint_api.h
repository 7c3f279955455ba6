#pragma once

// The few declarations of the CUDA driver API that parking uses, written
// from NVIDIA's driver API reference (checkpoint group, CUDA 12.8) rather
// than taken from cuda.h, which gleaner does not build against. The
// static_asserts pin the x86-64 layouts; the fake libcuda.so.1 includes
// this same header, so the two cannot drift apart.

#include <cstddef>
#include <cstdint>

extern "C" {

using CUresult = int;
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_STATE = 401;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_NOT_PERMITTED = 800;
inline constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
inline constexpr CUresult CUDA_ERROR_TIMEOUT = 909;
inline constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

// CUprocessState.
inline constexpr int CU_PROCESS_STATE_RUNNING = 0;
inline constexpr int CU_PROCESS_STATE_LOCKED = 1;
inline constexpr int CU_PROCESS_STATE_CHECKPOINTED = 2;
inline constexpr int CU_PROCESS_STATE_FAILED = 3;

struct CUcheckpointLockArgs {
  unsigned int timeoutMs;  // 0: wait for ever (gleaner never passes 0)
  unsigned int reserved0;
  uint64_t reserved1[7];
};
struct CUcheckpointCheckpointArgs {
  uint64_t reserved[8];
};
struct CUcheckpointRestoreArgs {
  void* gpuPairs;  // CUcheckpointGpuPair*: remapping GPUs; null, same GPUs
  unsigned int gpuPairsCount;
  char reserved[44];
  uint64_t reserved1;
};
struct CUcheckpointUnlockArgs {
  uint64_t reserved[8];
};

}  // extern "C"

static_assert(sizeof(CUcheckpointLockArgs) == 64);
static_assert(offsetof(CUcheckpointLockArgs, reserved1) == 8);
static_assert(sizeof(CUcheckpointCheckpointArgs) == 64);
static_assert(sizeof(CUcheckpointRestoreArgs) == 64);
static_assert(offsetof(CUcheckpointRestoreArgs, reserved1) == 56);
static_assert(sizeof(CUcheckpointUnlockArgs) == 64);

namespace gleaner::gpu::cuda {

using InitFn = CUresult (*)(unsigned int);
using DriverVersionFn = CUresult (*)(int*);
using ErrorTextFn = CUresult (*)(CUresult, const char**);
using GetStateFn = CUresult (*)(int, int*);
using LockFn = CUresult (*)(int, CUcheckpointLockArgs*);
using CheckpointFn = CUresult (*)(int, CUcheckpointCheckpointArgs*);
using RestoreFn = CUresult (*)(int, CUcheckpointRestoreArgs*);
using UnlockFn = CUresult (*)(int, CUcheckpointUnlockArgs*);

}  // namespace gleaner::gpu::cuda
