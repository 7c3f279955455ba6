#pragma once

// Our own declarations of the part of NVML's C ABI that gleaner uses
// (nvml.h is not installable on build machines). Layouts are x86_64 LP64 and
// are checked by the static_asserts below; values and layouts follow NVIDIA's
// NVML API reference. Both the loader (nvml_library.cc) and the fake driver
// (tools/fake_nvml) include this file, so they cannot disagree.

#include <cstddef>

extern "C" {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEventSet_t = struct nvmlEventSet_st*;

// nvmlReturn_t values.
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_POWER = 8;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_IRQ_ISSUE = 11;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_CORRUPTED_INFOROM = 14;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_OPERATING_SYSTEM = 17;
inline constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
inline constexpr nvmlReturn_t NVML_ERROR_MEMORY = 20;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_NOT_FOUND = 28;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// Buffer sizes.
inline constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;

// Enumerations used as arguments.
inline constexpr int NVML_TEMPERATURE_GPU = 0;
inline constexpr int NVML_CLOCK_SM = 1;
inline constexpr int NVML_P2P_CAPS_INDEX_NVLINK = 2;
inline constexpr int NVML_P2P_STATUS_OK = 0;
inline constexpr int NVML_P2P_STATUS_NOT_SUPPORTED = 5;
// nvmlMemoryErrorType_t and nvmlEccCounterType_t.
inline constexpr int NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;
inline constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
inline constexpr int NVML_VOLATILE_ECC = 0;
inline constexpr int NVML_AGGREGATE_ECC = 1;
// nvmlEnableState_t.
inline constexpr int NVML_FEATURE_DISABLED = 0;
inline constexpr int NVML_FEATURE_ENABLED = 1;
// Event type bits.
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8;

// nvmlGpuTopologyLevel_t.
inline constexpr int NVML_TOPOLOGY_INTERNAL = 0;
inline constexpr int NVML_TOPOLOGY_SINGLE = 10;
inline constexpr int NVML_TOPOLOGY_MULTIPLE = 20;
inline constexpr int NVML_TOPOLOGY_HOSTBRIDGE = 30;
inline constexpr int NVML_TOPOLOGY_NODE = 40;
inline constexpr int NVML_TOPOLOGY_SYSTEM = 50;

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // "%08X:%02X:%02X.0"
};

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
inline constexpr unsigned int nvmlMemory_v2 = sizeof(nvmlMemory_v2_t) | (2u << 24);

struct nvmlTemperature_v1_t {
  unsigned int version;
  int sensorType;
  int temperature;
};
inline constexpr unsigned int nvmlTemperature_v1 = sizeof(nvmlTemperature_v1_t) | (1u << 24);

// The process-info layouts. v1: plain symbol on old drivers. v2: `_v2` and
// (in every driver but 535.43-535.86) `_v3`. The 32-byte one is what
// `_v3` wrote in drivers 535.43-535.86.
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
struct nvmlProcessInfo_r535_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
};
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;

// One process's utilization over a stretch of the driver's sampling
// (nvmlDeviceGetProcessUtilization). `timeStamp` is the CPU clock in µs.
struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

// One event from an event set (nvmlEventSetWait_v2). For an Xid event,
// `eventData` is the Xid (999: an unknown one).
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

}  // extern "C"

static_assert(sizeof(nvmlEventData_t) == 32 && offsetof(nvmlEventData_t, eventData) == 16);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, used) == 32);
static_assert(nvmlMemory_v2 == 0x02000028);
static_assert(nvmlTemperature_v1 == 0x0100000C);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(sizeof(nvmlProcessInfo_r535_t) == 32);
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);

namespace gleaner::gpu::nvml {

// Signatures of the entry points, by symbol family.
using InitFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using StringFn = nvmlReturn_t (*)(char*, unsigned int);
using IntOutFn = nvmlReturn_t (*)(int*);
using CountFn = nvmlReturn_t (*)(unsigned int*);
using HandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using DeviceStringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using PciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using MemoryV1Fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using MemoryV2Fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using UtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using TemperatureVFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperature_v1_t*);
using TemperatureFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using DeviceUintFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using ClockInfoFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
// The process-info array is untyped: its element size depends on the symbol
// and the driver version (see ProcessInfoLayout).
using ProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);
using ProcessUtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlProcessUtilizationSample_t*,
                                              unsigned int*, unsigned long long);
using CommonAncestorFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int*);
using P2PStatusFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int, int*);
using EccCountFn = nvmlReturn_t (*)(nvmlDevice_t, int, int, unsigned long long*);
using DeviceU64Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using EnableStateFn = nvmlReturn_t (*)(nvmlDevice_t, int*);
using RemappedRowsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*,
                                        unsigned int*);
using EventSetCreateFn = nvmlReturn_t (*)(nvmlEventSet_t*);
using RegisterEventsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
using EventSetWaitFn = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
using EventSetFreeFn = nvmlReturn_t (*)(nvmlEventSet_t);

}  // namespace gleaner::gpu::nvml
