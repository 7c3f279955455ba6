#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/units.h"
#include "observe/gpu_sample.h"
#include "observe/minute_rollup.h"
#include "observe/verdict.h"

// Co-location: lending the memory a quiet holder leaves free on its GPU to
// a job that declared how much it uses (docs/held-idle.md). Pure; the
// daemon and the simulator decide by these same functions.
namespace gleaner::observe {

struct ColocationConfig {
  // The holder's peak is learned over this look-back (minute by minute).
  core::Duration peak_window = core::Seconds(int64_t{7} * 24 * 3600);
  // Less of the holder seen than this, nothing is lent beside it.
  core::Duration min_history = core::Seconds(3600);
  // Kept free above the holder's peak, as a share of the GPU's memory.
  double margin_share = 0.10;
};

// What one holder used: its peak over the window, and for how long it was
// seen alone (minutes with a gleaner job beside it teach nothing about it).
struct HolderHistory {
  core::Bytes peak;
  core::Duration observed{};
};

// The holder's memory, minute by minute, over a sliding window: the peak
// in O(1) amortised per minute. Start afresh (Reset) when the holder
// changes: another process's history says nothing of this one.
class HolderPeakWindow {
 public:
  explicit HolderPeakWindow(core::Duration window) : window_(window) {}
  // A minute (or part of one) the holder was seen alone, holding `memory`.
  void Add(core::TimePoint at, core::Bytes memory, core::Duration observed);
  HolderHistory At(core::TimePoint now);
  void Reset();

 private:
  core::Duration window_;
  std::deque<std::pair<core::TimePoint, core::Bytes>> peaks_;  // decreasing memory
  std::deque<std::pair<core::TimePoint, core::Duration>> seen_;
  core::Duration observed_{};
};

// How much memory a job may use beside the holder: the GPU's memory less
// the holder's learned peak (or what it holds now, if more) less the
// margin. Zero, with the reason, where the history is too short or
// nothing is left.
struct Headroom {
  core::Bytes lendable;
  core::Bytes holder_peak;
  core::Bytes margin;
  core::Duration history{};
  std::string reason;
};
Headroom HeadroomBeside(core::Bytes total, core::Bytes held_now, const HolderHistory& history,
                        const ColocationConfig& config);

// Why a job lent beside a holder must leave now, or nullopt. `holder` is
// the verdict on the holder alone (its own processes and utilization):
// anything but HeldIdle means it computes again or someone else came;
// memory past the peak the loan was sized on may soon need the lent part.
std::optional<std::string> SharedClaim(const Verdict& holder, core::Bytes holder_memory,
                                       core::Bytes lent_beside_peak);

// Each GPU's holder, learned from completed minutes as the daemon records
// them: which processes held the GPU and their peak. A minute teaches only
// when the holder was alone (a gleaner job beside it would be counted as
// the holder's); other processes start the history afresh, and so does a
// process that started after the history did (its pid was another's).
class HolderLearner {
 public:
  explicit HolderLearner(ColocationConfig config) : config_(config) {}

  // A completed minute; each GPU's in time order (those read back from
  // the store at start, then the new ones).
  void Learn(const MinuteRollup& minute);
  // What a job may use beside the holder of this held-idle GPU now, in
  // whole GiB (a figure that moves by the byte would reclass the GPU in
  // the scheduler at every pass), or zero and why.
  BesideHolder Beside(const GpuSample& sample, const Verdict& verdict);

  const ColocationConfig& config() const { return config_; }

 private:
  struct Holder {
    std::set<uint32_t> pids;
    HolderPeakWindow peaks;
    std::optional<core::TimePoint> first;  // the first minute since the history began
  };
  ColocationConfig config_;
  std::map<core::GpuUuid, Holder> holders_;
};

}  // namespace gleaner::observe
