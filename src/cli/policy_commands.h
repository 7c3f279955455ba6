#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/job_commands.h"

namespace gleaner::cli {

// `gleaner policy show|list|diff|apply|rollback` (docs/policy.md): the
// running gleaner's policy versions, through its API, as root.
struct PolicyOptions {
  int64_t version = 0;            // show, rollback: which (0: the running one / the one before)
  std::vector<std::string> what;  // diff: FILE or VERSION, once or twice
  std::string file;               // apply
  std::string note;               // apply, rollback: why
  bool force = false;             // apply, rollback: even if it locks users out
  std::string since = "30d";      // dry-run: how much history
  std::string config;  // dry-run: the running policy's file (default DATA_DIR/gleaner.toml)
};

struct PolicyCommands {
  CLI::App* show;
  CLI::App* list;
  CLI::App* diff;
  CLI::App* apply;
  CLI::App* rollback;
  CLI::App* dry_run;
};

PolicyCommands AddPolicyCommands(CLI::App& app, PolicyOptions& options, JobOptions& api);

int RunPolicyShow(const PolicyOptions& options, const JobOptions& api, std::ostream& out,
                  std::ostream& err);
int RunPolicyList(const JobOptions& api, std::ostream& out, std::ostream& err);
int RunPolicyDiff(const PolicyOptions& options, const JobOptions& api, std::ostream& out,
                  std::ostream& err);
int RunPolicyApply(const PolicyOptions& options, const JobOptions& api, std::ostream& out,
                   std::ostream& err);
// Replays the site's recorded history under the running policy and under
// FILE, side by side (docs/policy.md#dry-run); reads the store itself.
int RunPolicyDryRun(const PolicyOptions& options, const JobOptions& api, std::ostream& out,
                    std::ostream& err);
int RunPolicyRollback(const PolicyOptions& options, const JobOptions& api, std::ostream& out,
                      std::ostream& err);

// The lines that differ between `before` and `after`, with two lines of
// context: "- " removed, "+ " added, "  " kept; "" when they are the same.
std::string LineDiff(const std::string& before, const std::string& after);

}  // namespace gleaner::cli
