#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "sched/cluster_state.h"

namespace gleaner::sched {

// GPUs held for one project: `gpus` of them (of a model, when given),
// always (standing) or from `starts_at` to `ends_at` (windowed). While the
// owner does not use them they are lent to preemptible jobs of other
// projects and taken back when the owner's work arrives; non-preemptible
// jobs of other projects never get them.
struct Reservation {
  std::string name;     // unique among live reservations: "vision-nightly"
  std::string project;  // the owner
  int gpus = 1;
  std::string gpu_model;                     // a substring of the model name ("H100"); empty: any
  std::optional<core::TimePoint> starts_at;  // unset: from when it is added
  std::optional<core::TimePoint> ends_at;    // unset: until ReservationEnded
};

// Name, project, a GPU count of at least 1, a window that ends after it
// starts. The message says what to change.
core::Status ValidateReservation(const Reservation& r);

// How a GPU stands for a reservation that might pin it.
enum class GpuStanding {
  kFree,         // nothing runs there: best
  kReclaimable,  // held by the owner or by jobs the owner may take it back from
  kUnavailable,  // held by a job the owner could not take it back from
};

// The reservations the scheduler knows and the GPUs each holds. Reserved
// GPUs are pinned: chosen when a reservation becomes active (on one node
// where it can, free GPUs first, never one held by a job the owner could not
// reclaim) and kept until it ends; GPUs of a lost node are dropped and
// replaced by TopUp. Mechanism only: who may use them is the scheduler's
// rule. Thread-compatible.
class ReservationBook {
 public:
  // A slot is a reservation's index, stable for its whole life.
  using Slot = int;
  static constexpr Slot kNone = -1;

  // Adds a reservation, active now if its window has begun. InvalidArgument
  // for a bad reservation or a name in use; FailedPrecondition when its
  // window has already ended.
  core::Status Add(const Reservation& r, core::TimePoint now);
  // Ends it at once; its GPUs are reserved no more. NotFound if unknown.
  core::Status End(const std::string& name);
  // Starts windows that have begun and ends those that are over, as of
  // `now`. Returns whether any reservation started or ended.
  bool Advance(core::TimePoint now);

  // Whether some active reservation holds fewer GPUs than it asks.
  bool short_of_gpus() const;
  // Pins GPUs to every active reservation short of them: per GPU,
  // `standing` says whether something runs there and whether the owner
  // could take it back. GPUs of dead nodes and other reservations are never
  // chosen. Returns whether any GPU was pinned.
  bool TopUp(const ClusterState& cluster,
             const std::function<GpuStanding(GpuIndex, const std::string& owner)>& standing);
  // The node's GPUs are gone: unpins them.
  void ForgetNode(const ClusterState& cluster, NodeIndex n);

  // The active reservation holding this GPU, or kNone.
  Slot HolderOf(GpuIndex g) const { return g < holder_.size() ? holder_[g] : kNone; }
  const Reservation& reservation(Slot s) const { return slots_[static_cast<size_t>(s)].r; }
  const std::vector<GpuIndex>& gpus(Slot s) const { return slots_[static_cast<size_t>(s)].gpus; }
  std::optional<Slot> Find(const std::string& name) const;
  // Active slots, in the order they were added.
  std::vector<Slot> Active() const;
  bool any_active() const { return active_ > 0; }
  // Whether the project owns an active reservation.
  bool OwnsActive(const std::string& project) const;

 private:
  struct Entry {
    Reservation r;
    bool active = false;
    bool over = false;
    std::vector<GpuIndex> gpus;
  };
  void Activate(Entry& e);
  void Deactivate(Entry& e);
  void Pin(Slot s, const ClusterState& cluster,
           const std::function<GpuStanding(GpuIndex, const std::string&)>& standing);

  std::vector<Entry> slots_;
  std::map<std::string, Slot> by_name_;  // live ones: not yet ended
  std::vector<Slot> holder_;             // per GpuIndex
  int active_ = 0;
};

}  // namespace gleaner::sched
