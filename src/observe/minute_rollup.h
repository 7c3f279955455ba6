#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "observe/gpu_sample.h"
#include "observe/verdict.h"

namespace gleaner::observe {

// One GPU's minute, summarised: what history keeps once raw samples are
// dropped.
struct MinuteRollup {
  core::GpuUuid uuid;
  core::TimePoint minute;  // start of the minute (UTC)
  int samples = 0;
  double utilization_min_pct = 0;
  double utilization_mean_pct = 0;
  double utilization_max_pct = 0;
  std::optional<core::Bytes> memory_used_max;
  std::optional<double> power_mean_w;
  std::set<uint32_t> pids;
  std::set<std::string> users;          // owners: users of processes gleaner did not start
  std::set<std::string> job_users;      // users of gleaner's own jobs' processes
  GpuState state = GpuState::kUnknown;  // the minute's last verdict
  // Time in the minute, excluding gaps, credited to the state the GPU was in.
  core::Duration observed{};   // all of it
  core::Duration busy{};       // Busy, HeldIdle, Harvested, Shared, Protected or Reserved
  core::Duration idle{};       // Idle
  core::Duration held_idle{};  // HeldIdle (part of busy): memory held, nothing computed
  core::Duration harvested{};  // Harvested or Shared (part of busy): gleaner's jobs ran

  bool operator==(const MinuteRollup&) const = default;
};

// Folds samples and their verdicts into minute roll-ups. A minute is
// complete once a sample of a later minute arrives; samples without a
// utilization reading are not counted (a gap is never idle time). Pure.
class MinuteRollupBuilder {
 public:
  explicit MinuteRollupBuilder(core::Duration max_sample_gap) : max_gap_(max_sample_gap) {}

  // Returns the minutes this sample completed (for this GPU).
  std::vector<MinuteRollup> Add(const GpuSample& sample, const Verdict& verdict);
  // Completes every open minute (on shutdown).
  std::vector<MinuteRollup> Flush();

 private:
  struct Open {
    MinuteRollup rollup;
    double utilization_sum = 0;
    double power_sum = 0;
    int power_samples = 0;
    std::optional<core::TimePoint> last_at;
    GpuState last_state = GpuState::kUnknown;
  };
  static MinuteRollup Finish(Open& open);

  core::Duration max_gap_;
  std::map<core::GpuUuid, Open> open_;
};

core::TimePoint MinuteOf(core::TimePoint t);

// One roll-up for a minute recorded in two parts (a restart within the
// minute): sums, extremes, sample-weighted means, unions; `later`'s state.
MinuteRollup MergeRollups(const MinuteRollup& earlier, const MinuteRollup& later);

}  // namespace gleaner::observe
