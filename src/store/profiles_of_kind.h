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

}  // namespace gleaner::store
