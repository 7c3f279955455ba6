#pragma once

#include <map>
#include <string>

#include "core/result.h"
#include "observe/usage_profile.h"

namespace gleaner::store {

using ProfileMap = std::map<std::string, observe::HourOfWeekProfile>;

// ObservationStore::Profiles for any backend, given how it reads the
// stored rows of one kind: checks the kind, and gives users and projects
// the whole host's observed time, of which their share is taken.
template <typename ReadRows>  // core::Result<ProfileMap>(const std::string& kind)
core::Result<ProfileMap> ProfilesOfKind(const std::string& kind, ReadRows read_rows) {
  if (kind != "gpu" && kind != "user" && kind != "project" && kind != "host") {
    return core::InvalidArgument("unknown profile kind \"" + kind +
                                 "\"; expected gpu, user, project or host");
  }
  GLEANER_ASSIGN_OR_RETURN(ProfileMap out, read_rows(kind));
  if (kind == "user" || kind == "project") {
    GLEANER_ASSIGN_OR_RETURN(ProfileMap host, read_rows(std::string("host")));
    const observe::HourOfWeekProfile& all = host["all"];
    for (auto& [key, profile] : out) profile.observed_s = all.observed_s;
  }
  return out;
}

// One stored row of a usage profile: an hour of the week of one key.
struct ProfileRow {
  const std::string& kind;  // "gpu", "user", "project" or "host" (key "all")
  const std::string& key;
  int64_t hour_of_week;
  double busy_s;
  double observed_s;
};

// Calls `add(const ProfileRow&)` for every hour of `delta` that holds time,
// as ObservationStore::AddToProfiles stores it; stops at the first error.
template <typename AddRow>  // core::Status(const ProfileRow&)
core::Status ForEachProfileRow(const observe::UsageProfiles& delta, AddRow add) {
  static const std::string kGpu = "gpu", kUser = "user", kProject = "project", kHost = "host";
  const ProfileMap host{{"all", delta.host()}};
  for (const auto& [kind, profiles] :
       {std::pair<const std::string&, const ProfileMap&>{kGpu, delta.gpus()},
        {kUser, delta.users()},
        {kProject, delta.projects()},
        {kHost, host}}) {
    for (const auto& [key, profile] : profiles) {
      for (int h = 0; h < observe::kHoursPerWeek; ++h) {
        const auto i = static_cast<size_t>(h);
        if (profile.observed_s[i] == 0 && profile.busy_s[i] == 0) continue;
        GLEANER_RETURN_IF_ERROR(
            add(ProfileRow{kind, key, h, profile.busy_s[i], profile.observed_s[i]}));
      }
    }
  }
  return core::Status::Ok();
}

}  // namespace gleaner::store
