#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/job_commands.h"

namespace gleaner::cli {

// `gleaner events`, `approvals`, `approve` and `deny` (docs/events.md,
// docs/projects.md): the history and the approvals of a running gleaner,
// through its API. They share the job commands' options (--data-dir,
// --server, --token, --json).
struct GovernanceOptions {
  std::string since = "1d";  // events: an age (30m, 24h, 7d)
  std::string user;
  std::string kind;
  int64_t job = 0;
  int64_t limit = 1000;  // events: at most this many (0: all)
  int64_t id = 0;        // approve, deny
  std::string reason;    // approve, deny
};

struct GovernanceCommands {
  CLI::App* events;
  CLI::App* approvals;
  CLI::App* approve;
  CLI::App* deny;
};

GovernanceCommands AddGovernanceCommands(CLI::App& app, GovernanceOptions& options,
                                         JobOptions& api);

int RunEvents(const GovernanceOptions& options, const JobOptions& api, std::ostream& out,
              std::ostream& err);
int RunApprovals(const JobOptions& api, std::ostream& out, std::ostream& err);
// approve and deny: `approve` says which.
int RunDecide(const GovernanceOptions& options, const JobOptions& api, bool approve,
              std::ostream& out, std::ostream& err);

// A job's or the site's events as a table, oldest first.
std::string EventTable(const nlohmann::json& events);

}  // namespace gleaner::cli
