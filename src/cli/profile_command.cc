#include "cli/profile_command.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/exit_codes.h"
#include "config/data_dir.h"
#include "store/sqlite_store.h"

namespace gleaner::cli {

CLI::App* AddProfileCommand(CLI::App& app, ProfileOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "profile", "Hour-of-week usage per GPU, user or project, as learned by `gleaner monitor`");
  cmd->add_option("--kind", options.kind, "gpu, user or project")
      ->check(CLI::IsMember({"gpu", "user", "project"}))
      ->capture_default_str();
  cmd->add_option("--key", options.key, "Only this GPU (UUID), user or project");
  cmd->add_option("--data-dir", options.data_dir, "Where `gleaner monitor` keeps history");
  cmd->add_flag("--json", options.json, "Occupancy (0-1, null when unobserved) per hour of week");
  return cmd;
}

int RunProfile(const ProfileOptions& options, std::ostream& out, std::ostream& err) {
  const std::string path = config::DataDir(options.data_dir) + "/gleaner.db";
  const core::Result<bool> stored = config::InDataDir(path);
  if (!stored.ok()) {
    err << "gleaner: " << stored.status().message() << "\n";
    return kExitFailure;
  }
  if (!*stored) {
    err << "gleaner: no history at " << path
        << "; `gleaner monitor` builds it (or pass --data-dir)\n";
    return kExitFailure;
  }
  auto store = store::SqliteStore::Open(path);
  if (!store.ok()) {
    err << "gleaner: " << store.status().message() << "\n";
    return kExitFailure;
  }
  auto profiles = (*store)->Profiles(options.kind);
  if (!profiles.ok()) {
    err << "gleaner: " << profiles.status().message() << "\n";
    return kExitFailure;
  }
  if (!options.key.empty()) {
    if (!profiles->contains(options.key)) {
      err << "gleaner: no " << options.kind << " profile for \"" << options.key << "\"\n";
      return kExitFailure;
    }
    auto kept = profiles->extract(options.key);
    profiles->clear();
    profiles->insert(std::move(kept));
  }
  if (options.json) {
    nlohmann::json doc = nlohmann::json::object();
    for (const auto& [key, p] : *profiles) {
      nlohmann::json hours = nlohmann::json::array();
      for (int h = 0; h < observe::kHoursPerWeek; ++h) {
        auto o = p.Occupancy(h);
        hours.push_back(o ? nlohmann::json(*o) : nlohmann::json(nullptr));
      }
      doc[key] = hours;
    }
    out << nlohmann::json{{"kind", options.kind}, {"hour_of_week_utc", doc}}.dump(2) << "\n";
    return kExitOk;
  }
  static const char* kDays[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  for (const auto& [key, p] : *profiles) {
    out << options.kind << " " << key
        << ": share of time in use, by hour (UTC); . = not observed\n";
    out << "     ";
    for (int h = 0; h < 24; ++h) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%4d", h);
      out << buf;
    }
    out << "\n";
    for (int d = 0; d < 7; ++d) {
      out << kDays[d] << "  ";
      for (int h = 0; h < 24; ++h) {
        auto o = p.Occupancy(d * 24 + h);
        char buf[8];
        if (o) {
          std::snprintf(buf, sizeof buf, "%3ld%%", std::lround(*o * 100));
        } else {
          std::snprintf(buf, sizeof buf, "%4s", ".");
        }
        out << buf;
      }
      out << "\n";
    }
    out << "\n";
  }
  if (profiles->empty()) out << "no " << options.kind << " profiles yet\n";
  return kExitOk;
}

}  // namespace gleaner::cli
