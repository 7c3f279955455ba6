#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "observe/minute_rollup.h"

namespace gleaner::observe {

inline constexpr int kHoursPerWeek = 168;

// Hour-of-week occupancy: for each hour of the week (0 = Monday 00:00 UTC),
// the share of the observed time a GPU was in use, or the share of the
// host's GPU-time a user (or project) held GPUs. Accumulates across weeks.
struct HourOfWeekProfile {
  std::array<double, kHoursPerWeek> busy_s{};      // GPU-seconds in use
  std::array<double, kHoursPerWeek> observed_s{};  // GPU-seconds observed

  // busy / observed for the hour; nullopt when never observed.
  std::optional<double> Occupancy(int hour) const;
  bool operator==(const HourOfWeekProfile&) const = default;
};

// The hour of the week a moment falls in, 0..167, Monday 00:00 UTC = 0.
int HourOfWeek(core::TimePoint t);

// Profiles per GPU, per user and per project, built from minute roll-ups;
// projects come from a user→project map. A user's (or project's) busy time
// is the GPU-time their processes were on GPUs, whatever the GPUs did; its
// observed time is the whole host's GPU-time, kept once as host().
class UsageProfiles {
 public:
  explicit UsageProfiles(std::map<std::string, std::string> project_of_user = {})
      : project_of_user_(std::move(project_of_user)) {}

  void Add(const MinuteRollup& rollup);

  const std::map<std::string, HourOfWeekProfile>& gpus() const { return gpus_; }
  // Only busy_s is kept per user and project; their observed_s is host().
  const std::map<std::string, HourOfWeekProfile>& users() const { return users_; }
  const std::map<std::string, HourOfWeekProfile>& projects() const { return projects_; }
  const HourOfWeekProfile& host() const { return host_; }

  // users() or projects() with observed_s filled in from host().
  std::map<std::string, HourOfWeekProfile> WithHostTime(
      const std::map<std::string, HourOfWeekProfile>& group) const;

 private:
  std::map<std::string, std::string> project_of_user_;
  std::map<std::string, HourOfWeekProfile> gpus_;
  std::map<std::string, HourOfWeekProfile> users_;
  std::map<std::string, HourOfWeekProfile> projects_;
  HourOfWeekProfile host_;  // observed_s: GPU-seconds observed on all GPUs
};

}  // namespace gleaner::observe
