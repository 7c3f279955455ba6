#include "gpu/cuda/cuda_checkpoint.h"

#include <dlfcn.h>

#include "core/enum_names.h"

namespace gleaner::gpu {
namespace {

template <typename Fn>
Fn Symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

std::string Pid(uint32_t pid) { return "process " + std::to_string(pid); }

std::string VersionText(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

constexpr auto kCudaProcessStateNames = core::MakeEnumNames<CudaProcessState>(
    {
        {CudaProcessState::kRunning, "running"},
        {CudaProcessState::kLocked, "locked"},
        {CudaProcessState::kCheckpointed, "checkpointed"},
        {CudaProcessState::kFailed, "failed"},
    },
    "unknown");

std::string_view CudaProcessStateName(CudaProcessState state) {
  return kCudaProcessStateNames.Name(state);
}

core::Result<std::unique_ptr<CudaCheckpoint>> CudaCheckpoint::Open(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return core::Unavailable("cannot load " + library + " (" + (why ? why : "not found") +
                             "): parking needs the NVIDIA driver's CUDA library");
  }
  std::unique_ptr<CudaCheckpoint> lib(new CudaCheckpoint(handle));
  const auto init = Symbol<cuda::InitFn>(handle, "cuInit");
  const auto version = Symbol<cuda::DriverVersionFn>(handle, "cuDriverGetVersion");
  lib->error_name_ = Symbol<cuda::ErrorTextFn>(handle, "cuGetErrorName");
  lib->error_string_ = Symbol<cuda::ErrorTextFn>(handle, "cuGetErrorString");
  if (init == nullptr || version == nullptr) {
    return core::Unavailable(library + " lacks cuInit or cuDriverGetVersion: not a CUDA driver");
  }
  if (const CUresult rc = version(&lib->driver_version_); rc != CUDA_SUCCESS) {
    return core::Unavailable("cuDriverGetVersion: " + lib->Describe(rc));
  }
  lib->get_state_ = Symbol<cuda::GetStateFn>(handle, "cuCheckpointProcessGetState");
  lib->lock_ = Symbol<cuda::LockFn>(handle, "cuCheckpointProcessLock");
  lib->checkpoint_ = Symbol<cuda::CheckpointFn>(handle, "cuCheckpointProcessCheckpoint");
  lib->restore_ = Symbol<cuda::RestoreFn>(handle, "cuCheckpointProcessRestore");
  lib->unlock_ = Symbol<cuda::UnlockFn>(handle, "cuCheckpointProcessUnlock");
  if (!lib->get_state_ || !lib->lock_ || !lib->checkpoint_ || !lib->restore_ || !lib->unlock_) {
    return core::NotSupported("the driver's CUDA " + VersionText(lib->driver_version_) +
                              " has no checkpoint API: parking needs driver 570 or later "
                              "(CUDA 12.8)");
  }
  if (const CUresult rc = init(0); rc != CUDA_SUCCESS) {
    return core::Unavailable("cuInit: " + lib->Describe(rc));
  }
  return lib;
}

CudaCheckpoint::~CudaCheckpoint() { dlclose(handle_); }

std::string CudaCheckpoint::Describe(CUresult rc) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (error_name_ == nullptr || error_name_(rc, &name) != CUDA_SUCCESS || name == nullptr) {
    name = nullptr;
  }
  if (error_string_ == nullptr || error_string_(rc, &text) != CUDA_SUCCESS || text == nullptr) {
    text = nullptr;
  }
  std::string out = name ? name : "CUDA error " + std::to_string(rc);
  if (text) out += std::string(" (") + text + ")";
  switch (rc) {
    case CUDA_ERROR_NOT_PERMITTED:
      out += "; persistence mode on (nvidia-smi -pm 1) usually fixes it";
      break;
    case CUDA_ERROR_NOT_SUPPORTED:
      out += "; the process uses what a checkpoint cannot move (UVM, CUDA IPC, MIG)";
      break;
    default:
      break;
  }
  return out;
}

core::Result<CudaProcessState> CudaCheckpoint::State(uint32_t pid) const {
  int state = -1;
  if (const CUresult rc = get_state_(static_cast<int>(pid), &state); rc != CUDA_SUCCESS) {
    return core::Status(core::StatusCode::kFailedPrecondition,
                        "cannot read the CUDA state of " + Pid(pid) + ": " + Describe(rc));
  }
  switch (state) {
    case CU_PROCESS_STATE_RUNNING:
      return CudaProcessState::kRunning;
    case CU_PROCESS_STATE_LOCKED:
      return CudaProcessState::kLocked;
    case CU_PROCESS_STATE_CHECKPOINTED:
      return CudaProcessState::kCheckpointed;
    case CU_PROCESS_STATE_FAILED:
      return CudaProcessState::kFailed;
    default:
      return core::Internal("the driver says " + Pid(pid) + " is in CUDA state " +
                            std::to_string(state) + ", which gleaner does not know");
  }
}

core::Status CudaCheckpoint::Park(uint32_t pid, std::chrono::milliseconds lock_timeout) const {
  GLEANER_ASSIGN_OR_RETURN(const CudaProcessState state, State(pid));
  if (state != CudaProcessState::kRunning) {
    return core::Status(core::StatusCode::kFailedPrecondition,
                        Pid(pid) + " is " + std::string(CudaProcessStateName(state)) +
                            " already (by someone else?): not parked");
  }
  CUcheckpointLockArgs lock{};
  lock.timeoutMs = static_cast<unsigned>(std::max<int64_t>(lock_timeout.count(), 1));
  if (const CUresult rc = lock_(static_cast<int>(pid), &lock); rc != CUDA_SUCCESS) {
    return core::Status(core::StatusCode::kFailedPrecondition,
                        rc == CUDA_ERROR_TIMEOUT
                            ? Pid(pid) + "'s GPU work did not finish within " +
                                  std::to_string(lock.timeoutMs) +
                                  " ms: it is not idle; left running"
                            : "cannot lock " + Pid(pid) + ": " + Describe(rc) + "; left running");
  }
  CUcheckpointCheckpointArgs checkpoint{};
  if (const CUresult rc = checkpoint_(static_cast<int>(pid), &checkpoint); rc != CUDA_SUCCESS) {
    CUcheckpointUnlockArgs unlock{};
    const CUresult unlocked = unlock_(static_cast<int>(pid), &unlock);
    return core::Status(
        core::StatusCode::kFailedPrecondition,
        "cannot checkpoint " + Pid(pid) + ": " + Describe(rc) +
            (unlocked == CUDA_SUCCESS ? "; unlocked, it runs on"
                                      : "; and unlocking it failed too (" + Describe(unlocked) +
                                            "): it waits in its next CUDA call"));
  }
  return core::Status::Ok();
}

core::Status CudaCheckpoint::Restore(uint32_t pid) const {
  GLEANER_ASSIGN_OR_RETURN(const CudaProcessState state, State(pid));
  if (state == CudaProcessState::kCheckpointed) {
    CUcheckpointRestoreArgs restore{};
    if (const CUresult rc = restore_(static_cast<int>(pid), &restore); rc != CUDA_SUCCESS) {
      return core::Unavailable("cannot restore " + Pid(pid) + ": " + Describe(rc) +
                               "; it stays parked, its memory kept, until a retry succeeds");
    }
  } else if (state != CudaProcessState::kLocked) {
    return core::Status(core::StatusCode::kFailedPrecondition,
                        Pid(pid) + " is " + std::string(CudaProcessStateName(state)) +
                            ", not parked: nothing to restore");
  }
  CUcheckpointUnlockArgs unlock{};
  if (const CUresult rc = unlock_(static_cast<int>(pid), &unlock); rc != CUDA_SUCCESS) {
    return core::Unavailable("restored " + Pid(pid) + " but cannot unlock it: " + Describe(rc) +
                             "; it waits in its next CUDA call until a retry succeeds");
  }
  return core::Status::Ok();
}

}  // namespace gleaner::gpu
