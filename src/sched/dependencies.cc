#include "sched/dependencies.h"

#include <charconv>
#include <string>

#include "core/enum_names.h"

namespace gleaner::sched {

constexpr auto kDependencyKindNames = core::MakeEnumNames<DependencyKind>(
    {
        {DependencyKind::kAfterOk, "afterok"},
        {DependencyKind::kAfterAny, "afterany"},
        {DependencyKind::kAfterNotOk, "afternotok"},
    },
    "afterok");

std::string_view DependencyKindName(DependencyKind kind) { return kDependencyKindNames.Name(kind); }

std::vector<Dependency> DependenciesOf(const JobSpec& spec) {
  std::vector<Dependency> out;
  for (JobId id : spec.after_success) out.push_back({DependencyKind::kAfterOk, id});
  for (JobId id : spec.after_any) out.push_back({DependencyKind::kAfterAny, id});
  for (JobId id : spec.after_failure) out.push_back({DependencyKind::kAfterNotOk, id});
  return out;
}

namespace {

std::vector<std::string_view> Split(std::string_view text, char by) {
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    const size_t at = text.find(by, from);
    parts.push_back(text.substr(from, at == std::string_view::npos ? at : at - from));
    if (at == std::string_view::npos) return parts;
    from = at + 1;
  }
}

core::Status Bad(std::string_view what) {
  return core::InvalidArgument(
      "--dependency " + std::string(what) +
      "; write KIND:JOB[:JOB...][,KIND:JOB...] with KIND afterok, afterany or afternotok, "
      "as in afterok:12:13,afterany:14, or singleton");
}

}  // namespace

core::Status AddDependencies(std::string_view text, JobSpec* spec) {
  if (text.find('?') != std::string_view::npos) {
    return Bad("uses '?' (any one of several): gleaner needs all of them; list them with ','");
  }
  for (std::string_view item : Split(text, ',')) {
    const std::vector<std::string_view> fields = Split(item, ':');
    if (item == "singleton") {
      spec->singleton = true;
      continue;
    }
    std::vector<JobId>* list = nullptr;
    if (fields[0] == "afterok") list = &spec->after_success;
    if (fields[0] == "afterany") list = &spec->after_any;
    if (fields[0] == "afternotok") list = &spec->after_failure;
    if (list == nullptr) {
      return Bad("has \"" + std::string(fields[0]) + "\", which is not a kind gleaner knows");
    }
    if (fields.size() < 2) return Bad("names no job after " + std::string(fields[0]));
    for (size_t i = 1; i < fields.size(); ++i) {
      JobId id = 0;
      const auto [end, ec] =
          std::from_chars(fields[i].data(), fields[i].data() + fields[i].size(), id);
      if (ec != std::errc() || end != fields[i].data() + fields[i].size() || fields[i].empty()) {
        return Bad("has \"" + std::string(fields[i]) + "\" where a job id goes");
      }
      list->push_back(id);
    }
  }
  return core::Status::Ok();
}

}  // namespace gleaner::sched
