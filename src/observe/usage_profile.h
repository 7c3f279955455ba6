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
// projects come from a user→project map.
class UsageProfiles {
 public:
  explicit UsageProfiles(std::map<std::string, std::string> project_of_user = {})
      : project_of_user_(std::move(project_of_user)) {}

  void Add(const MinuteRollup& rollup);

  std::map<std::string, HourOfWeekProfile>& gpus() { return gpus_; }
  std::map<std::string, HourOfWeekProfile>& users() { return users_; }
  std::map<std::string, HourOfWeekProfile>& projects() { return projects_; }
  const std::map<std::string, HourOfWeekProfile>& gpus() const { return gpus_; }
  const std::map<std::string, HourOfWeekProfile>& users() const { return users_; }
  const std::map<std::string, HourOfWeekProfile>& projects() const { return projects_; }

 private:
  std::map<std::string, std::string> project_of_user_;
  std::map<std::string, HourOfWeekProfile> gpus_;
  std::map<std::string, HourOfWeekProfile> users_;
  std::map<std::string, HourOfWeekProfile> projects_;
};

}  // namespace gleaner::observe
