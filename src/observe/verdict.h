#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/ids.h"
#include "core/units.h"

namespace gleaner::observe {

enum class GpuState {
  kUnknown,    // not enough data yet (start, or after a gap)
  kBusy,       // in use, or quiet too briefly to call idle
  kIdle,       // no processes, quiet, and likely to stay quiet: can be lent
  kHeldIdle,   // a process holds memory but has not computed for the window
  kProtected,  // a protected GPU, user or command: never lent
  kReserved,   // held for its owner
  kHarvested,  // running a gleaner job
  kUnhealthy,  // lost, not attachable, or too hot
  // A gleaner job runs beside a quiet holder, in the memory it leaves free.
  // (Last: agents send states by number.)
  kShared,
};

std::string_view GpuStateName(GpuState state);
// The state named `name` ("held_idle"), or nullopt.
std::optional<GpuState> ParseGpuState(std::string_view name);

// Lending beside a quiet holder (docs/held-idle.md). On a held-idle GPU:
// what a job may use beside the holder, or why nothing; on a shared GPU,
// the loan as it stands.
struct BesideHolder {
  core::Bytes lendable;         // zero: nothing may be lent (`reason` says why)
  core::Bytes holder_memory;    // what the holder holds now
  core::Bytes holder_peak;      // its peak over the window, as learned
  core::Duration history{};     // how much of the holder the peak rests on
  core::Bytes margin;           // kept free above the peak
  core::Bytes declared;         // shared: what the job beside it declared
  core::Bytes borrower_memory;  // shared: what that job uses now
  std::string reason;           // why nothing may be lent

  bool operator==(const BesideHolder&) const = default;
};

// A holder gleaner parks, or is about to (docs/held-idle.md): its GPU
// memory moved to host memory while the GPU is lent whole.
struct HolderParking {
  enum class Phase {
    kNotice,     // told; parked at `at` unless it computes or is kept
    kParking,    // since `at` the driver moves its memory to host memory: not lent yet
    kParked,     // since `at`; the GPU is free of it
    kRestoring,  // it woke (or was asked back): the GPU is emptied for it
  };
  Phase phase = Phase::kNotice;
  uint32_t pid = 0;
  std::string user;    // empty when unknown
  core::Bytes memory;  // what it holds on the GPU, or in host memory once parked
  core::TimePoint at;
  std::string reason;   // restoring: why
  std::string waiting;  // restoring: why not yet (the GPU's free memory, a failed try)

  bool operator==(const HolderParking&) const = default;
};
std::string_view ParkingPhaseName(HolderParking::Phase phase);
std::optional<HolderParking::Phase> ParseParkingPhase(std::string_view name);

// The numbers a verdict rests on. Every field is what the classifier saw;
// `reason` says in one line why the state follows from them.
// How much longer a quiet GPU is expected to stay quiet
// (IdleWindowForecast): more quiet time ahead with 80 %, 50 % and 20 %
// chance, and the past spells that rests on.
struct QuietForecast {
  core::Duration p80{}, p50{}, p20{};
  int64_t spells = 0;  // ended spells longer than this one has lasted so far
  bool own = false;    // this GPU's own spells, not all the host's GPUs'

  bool operator==(const QuietForecast&) const = default;
};

struct Evidence {
  core::Duration window{};        // the look-back that mattered (idle_after, held_idle_after)
  core::Duration quiet_for{};     // since utilization was last at or above the busy threshold
  core::Duration observed_for{};  // continuous data since the start or the last gap
  std::optional<double> utilization_pct;  // now
  double max_utilization_pct_in_window = 0;
  int processes = 0;
  int foreign_processes = 0;           // processes gleaner did not start
  std::optional<int64_t> lent_to_job;  // the gleaner job the GPU is lent to

  core::Bytes process_memory;  // held by the GPU's processes
  std::optional<double> power_w;
  std::optional<double> idle_power_w;           // the GPU's baseline at rest, as learned
  std::optional<double> confidence;             // chance to stay quiet for the horizon
  int64_t similar_pauses = 0;                   // how many pauses the confidence rests on
  std::optional<QuietForecast> quiet_forecast;  // idle or held idle, once spells are known
  std::optional<BesideHolder> beside_holder;    // held idle or shared
  std::optional<HolderParking> parking;         // its holder's, where parking applies
  // Why it is not lent whatever its state: outside a pilot's allow-list.
  std::string lend_blocked;
  std::string reason;

  bool operator==(const Evidence&) const = default;
};

struct Verdict {
  core::GpuUuid uuid;
  GpuState state = GpuState::kUnknown;
  core::TimePoint since;  // when this state began
  core::TimePoint at;     // the sample it was made on
  Evidence evidence;

  bool operator==(const Verdict&) const = default;
};

}  // namespace gleaner::observe
