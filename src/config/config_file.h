#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "cost/cost_settings.h"
#include "observe/alerts.h"
#include "observe/colocation.h"
#include "observe/idle_config.h"
#include "observe/lending.h"
#include "observe/parking.h"
#include "sched/cluster_state.h"
#include "sched/scheduler_config.h"
#include "server/project_membership.h"
#include "server/submit_policy.h"
#include "server/submit_quota.h"
#include "server/token_api.h"
#include "slurm/slurm_settings.h"

namespace gleaner::config {

// gleaner.toml: every key is optional; docs/configuration.md lists them
// with their defaults.
struct GleanerConfig {
  observe::IdleConfig idle;
  // [colocation]: lending memory beside quiet holders; nullopt: never.
  std::optional<observe::ColocationConfig> colocation = observe::ColocationConfig{};
  // [parking]: parking forgotten holders' GPU memory in host memory; off
  // unless enabled.
  observe::ParkingConfig parking;
  std::string cuda_library = "libcuda.so.1";  // [parking] cuda_library
  core::Duration sample_interval = core::Seconds(1);
  core::Duration retention = core::Seconds(int64_t{90} * 24 * 3600);
  // [history] retention_days: how long the events of jobs, tokens and
  // policies are kept.
  core::Duration history_retention = core::Seconds(int64_t{365} * 24 * 3600);
  // [rules] approval_timeout_s: a job waiting for approval this long is
  // cancelled as expired.
  core::Duration approval_timeout = core::Seconds(int64_t{3} * 24 * 3600);
  // [projects] alice = "vision": each user's default project.
  std::map<std::string, std::string> project_of_user;
  // [projects.NAME] users, groups: who may charge jobs to it; once any is
  // defined, projects are enforced (docs/projects.md).
  std::vector<server::ProjectRule> projects;
  // [rules.class.NAME]: who may submit each priority class, and its jobs'
  // largest size and longest run.
  std::map<sched::PriorityClass, server::ClassRule> class_rules;
  // [rules.lend]: for a pilot, the only hosts and GPUs that may lend.
  observe::LendAllowList lend_allow;
  // [sessions] class, max_runtime_s: what interactive sessions get.
  server::SessionRule sessions;
  std::string alert_webhook_url;  // empty: alerts only go to the log
  std::vector<observe::AlertRule> alert_rules;
  sched::SchedulerConfig scheduler;  // [scheduler]: how gleaner up places jobs
  cost::CostSettings cost;           // [cost]: how GPU time is priced
  // [ui] anonymous_read: the dashboard's read-only routes answer over TCP
  // without a token (docs/ui.md); writes still need one.
  bool ui_anonymous_read = false;
  // [ui] hide_others_commands: others' GPU processes show their program's
  // name, not their command line; unset: as ui_anonymous_read.
  std::optional<bool> ui_hide_others_commands;
  // [api] allow_root_tokens, token_lifetime_days: see docs/security.md.
  server::TokenPolicy tokens;
  // [limits]: jobs and spec bytes one user, and one project, may hold.
  server::SubmitLimits submit_limits;
  slurm::SlurmSettings slurm;  // [slurm]: Slurm's jobs beside gleaner's view (docs/slurm.md)
  // [host] cpus, memory: what this host's jobs may claim; zero: all it has
  // (agent::HostResourcesForJobs).
  sched::HostResources host;
};

// The config file a command reads: `config_flag`, else, for root's data
// directory /var/lib/gleaner, /etc/gleaner/gleaner.toml where that exists,
// else DATA_DIR/gleaner.toml.
std::string ConfigPath(const std::string& data_dir, const std::string& config_flag);

// Reads the config file at `path`. A missing file is the defaults when
// `must_exist` is false. Errors name the file, the line and the key.
core::Result<GleanerConfig> LoadConfig(const std::string& path, bool must_exist);

// The config a command reads (ConfigPath): the file --config names, which
// must exist, or the default one, which may not.
core::Result<GleanerConfig> LoadCommandConfig(const std::string& data_dir,
                                              const std::string& config_flag);

// LoadConfig's parse of the file's text; errors call the text `path`.
core::Result<GleanerConfig> ParseConfig(std::string_view text, const std::string& path);

// Any TOML text as JSON (tables as objects, dates as TOML writes them),
// read as the config is: errors name `path` and the line.
core::Result<nlohmann::json> TomlToJson(std::string_view text, const std::string& path);

// The top-level sections ([idle], [cost], ...) whose contents differ
// between two config texts that parse, other than those in `live`, sorted.
std::vector<std::string> ChangedSections(std::string_view before, std::string_view after,
                                         const std::vector<std::string>& live);

}  // namespace gleaner::config
