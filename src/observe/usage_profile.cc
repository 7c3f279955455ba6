#include "observe/usage_profile.h"

#include <set>

namespace gleaner::observe {

std::optional<double> HourOfWeekProfile::Occupancy(int hour) const {
  if (observed_s[static_cast<size_t>(hour)] <= 0) return std::nullopt;
  return busy_s[static_cast<size_t>(hour)] / observed_s[static_cast<size_t>(hour)];
}

int HourOfWeek(core::TimePoint t) {
  const int64_t hours = core::ToUnixMicros(t) / 3'600'000'000LL;
  // 1970-01-01 was a Thursday: Monday-based hour = hours since epoch + 3 days.
  return static_cast<int>(((hours + 72) % kHoursPerWeek + kHoursPerWeek) % kHoursPerWeek);
}

void UsageProfiles::Add(const MinuteRollup& r) {
  const size_t hour = static_cast<size_t>(HourOfWeek(r.minute));
  const double observed = core::ToSecondsDouble(r.observed);
  HourOfWeekProfile& gpu = gpus_[r.uuid.str()];
  gpu.busy_s[hour] += core::ToSecondsDouble(r.busy);
  gpu.observed_s[hour] += observed;
  host_.observed_s[hour] += observed;
  std::set<std::string> holders = r.users;
  holders.insert(r.job_users.begin(), r.job_users.end());
  std::set<std::string> projects;
  for (const std::string& user : holders) {
    users_[user].busy_s[hour] += observed;
    if (auto it = project_of_user_.find(user); it != project_of_user_.end()) {
      projects.insert(it->second);
    }
  }
  for (const std::string& project : projects) projects_[project].busy_s[hour] += observed;
}

std::map<std::string, HourOfWeekProfile> UsageProfiles::WithHostTime(
    const std::map<std::string, HourOfWeekProfile>& group) const {
  std::map<std::string, HourOfWeekProfile> out = group;
  for (auto& [key, profile] : out) profile.observed_s = host_.observed_s;
  return out;
}

}  // namespace gleaner::observe
