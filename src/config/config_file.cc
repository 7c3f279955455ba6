#include "config/config_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "config/config_sections.h"
#include "config/data_dir.h"
#include "config/model_prices.h"
#include "config/toml_ascii.h"
#include "config/toml_fields.h"
#include "core/format.h"
#include "sched/scheduler.h"

namespace gleaner::config {
namespace {

using core::Status;

// [host]: the CPUs and memory this host's jobs may claim, less than all it
// has where the owner's own work needs the rest.
Status ReadHost(const std::string& path, const toml::table& t, sched::HostResources* host) {
  GLEANER_RETURN_IF_ERROR(CheckKeys(path, t, "host.", {"cpus", "memory"}));
  double cpus = 0;
  GLEANER_RETURN_IF_ERROR(Number(path, t, "host.", "cpus", 0, 4096, &cpus));  // 0: all
  host->cpu_milli = std::llround(cpus * 1000);
  if (const toml::node* node = t.get("memory"); node && node->value_or(std::string("-")) != "") {
    const std::optional<std::string> text = node->value<std::string>();
    core::Result<core::Bytes> bytes =
        text ? core::ParseBytes(*text) : core::InvalidArgument("expected a size like \"48G\"");
    if (!bytes.ok()) return Error(path, *node, "host.memory", bytes.status().message());
    if (bytes->count() == 0) return Error(path, *node, "host.memory", "more than 0");
    host->memory = *bytes;
  }
  return Status::Ok();
}

// [limits]: what one user, and one project, may hold in the queue.
Status ReadLimits(const std::string& path, const toml::table& t, server::SubmitLimits* limits) {
  const std::string p = "limits.";
  GLEANER_RETURN_IF_ERROR(CheckKeys(
      path, t, p,
      {"jobs_per_user", "spec_mib_per_user", "jobs_per_project", "spec_mib_per_project"}));
  constexpr int64_t kMaxJobs = int64_t{1} << 40;
  constexpr int64_t kMaxMiB = int64_t{1} << 30;
  GLEANER_RETURN_IF_ERROR(
      WholeNumber(path, t, p, "jobs_per_user", 0, kMaxJobs, &limits->jobs_per_user));
  GLEANER_RETURN_IF_ERROR(
      WholeNumber(path, t, p, "jobs_per_project", 0, kMaxJobs, &limits->jobs_per_project));
  for (auto [key, bytes] : {std::pair{"spec_mib_per_user", &limits->spec_bytes_per_user},
                            std::pair{"spec_mib_per_project", &limits->spec_bytes_per_project}}) {
    int64_t mib = *bytes >> 20;
    GLEANER_RETURN_IF_ERROR(WholeNumber(path, t, p, key, 0, kMaxMiB, &mib));
    *bytes = mib << 20;
  }
  return Status::Ok();
}

// [slurm]: where gleaner asks Slurm about its jobs, and when their unused
// GPUs become alerts (docs/slurm.md).
Status ReadSlurm(const std::string& path, const toml::table& t, slurm::SlurmSettings* s) {
  const std::string p = "slurm.";
  GLEANER_RETURN_IF_ERROR(CheckKeys(path, t, p,
                                    {"enabled",
                                     "node",
                                     "squeue",
                                     "conf",
                                     "slurmrestd",
                                     "token_file",
                                     "user",
                                     "api",
                                     "poll_interval_s",
                                     "timeout_s",
                                     "idle_alerts",
                                     "idle_alert_after_s",
                                     "idle_alert_min_gpus",
                                     "idle_alert_severity",
                                     "bridge",
                                     "bridge_partition",
                                     "bridge_qos",
                                     "bridge_account",
                                     "sbatch",
                                     "scancel",
                                     "scontrol",
                                     "idle_action",
                                     "idle_action_after_s"}));
  GLEANER_RETURN_IF_ERROR(Flag(path, t, p, "enabled", &s->enabled));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "node", &s->node));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "squeue", &s->squeue));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "conf", &s->conf));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "slurmrestd", &s->slurmrestd_url));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "token_file", &s->token_file));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "user", &s->user));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "api", &s->api));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "poll_interval_s", 1, 3600, &s->poll_interval));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "timeout_s", 1, 300, &s->timeout));
  GLEANER_RETURN_IF_ERROR(Flag(path, t, p, "idle_alerts", &s->idle_alerts));
  GLEANER_RETURN_IF_ERROR(
      Seconds(path, t, p, "idle_alert_after_s", 0, 30 * 86400, &s->idle_alert.after));
  int64_t min_gpus = s->idle_alert.min_gpus;
  GLEANER_RETURN_IF_ERROR(WholeNumber(path, t, p, "idle_alert_min_gpus", 1, 4096, &min_gpus));
  s->idle_alert.min_gpus = static_cast<int>(min_gpus);
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "idle_alert_severity", &s->idle_alert.severity));
  GLEANER_RETURN_IF_ERROR(Flag(path, t, p, "bridge", &s->bridge.enabled));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "bridge_partition", &s->bridge.partition));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "bridge_qos", &s->bridge.qos));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "bridge_account", &s->bridge.account));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "sbatch", &s->sbatch));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "scancel", &s->scancel));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "scontrol", &s->scontrol));
  std::string action(slurm::IdleActionName(s->idle_action.action));
  GLEANER_RETURN_IF_ERROR(Text(path, t, p, "idle_action", &action));
  if (action == "none" || action == "requeue" || action == "cancel") {
    s->idle_action.action = action == "requeue"  ? slurm::IdleAction::kRequeue
                            : action == "cancel" ? slurm::IdleAction::kCancel
                                                 : slurm::IdleAction::kNone;
  } else {
    return Error(path, *t.get("idle_action"), p + "idle_action",
                 "expected \"none\", \"requeue\" or \"cancel\"");
  }
  GLEANER_RETURN_IF_ERROR(
      Seconds(path, t, p, "idle_action_after_s", 0, 30 * 86400, &s->idle_action.after));
  // The owner hears first: the alert is the notice before the action.
  if (s->idle_action.action != slurm::IdleAction::kNone &&
      (!s->idle_alerts || s->idle_action.after < s->idle_alert.after)) {
    return Error(path, *t.get("idle_action"), p + "idle_action",
                 "needs idle_alerts = true and idle_action_after_s at least idle_alert_after_s: "
                 "the owner is alerted before their job is acted on");
  }
  if (s->bridge.enabled && (!s->enabled || s->bridge.partition.empty())) {
    return Error(path, *t.get("bridge"), p + "bridge",
                 "needs enabled = true and bridge_partition: the preemptible partition "
                 "gleaner's jobs are submitted to (docs/slurm.md)");
  }
  if (!s->slurmrestd_url.empty() && s->token_file.empty()) {
    return Error(path, *t.get("slurmrestd"), p + "slurmrestd",
                 "needs token_file: a file holding a token from `scontrol token username=" +
                     s->user + " lifespan=SECONDS`");
  }
  for (const std::string* name :
       {&s->node, &s->user, &s->api, &s->bridge.partition, &s->bridge.qos, &s->bridge.account}) {
    if (name->find_first_of(" \t\r\n/?#") != std::string::npos) {
      return core::InvalidArgument(path + ": [slurm] \"" + *name +
                                   "\" cannot be a Slurm name (no spaces, '/', '?' or '#')");
    }
  }
  return Status::Ok();
}

Status ReadColocation(const std::string& path, const toml::table& t,
                      std::optional<observe::ColocationConfig>* out) {
  const std::string p = "colocation.";
  GLEANER_RETURN_IF_ERROR(
      CheckKeys(path, t, p, {"enabled", "peak_window_days", "min_history_s", "margin_share"}));
  observe::ColocationConfig c;
  double days = core::ToSecondsDouble(c.peak_window) / 86400;
  GLEANER_RETURN_IF_ERROR(Number(path, t, p, "peak_window_days", 1, 90, &days));
  c.peak_window = core::Duration(static_cast<int64_t>(days * 86400e6));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "min_history_s", 60, 86400 * 30, &c.min_history));
  GLEANER_RETURN_IF_ERROR(Number(path, t, p, "margin_share", 0, 0.9, &c.margin_share));
  bool enabled = true;
  if (const toml::node* n = t.get("enabled")) {
    if (!n->is_boolean()) return Error(path, *n, p + "enabled", "expected true or false");
    enabled = *n->value<bool>();
  }
  *out = enabled ? std::optional(c) : std::nullopt;
  return Status::Ok();
}

// [projects]: `alice = "vision"` gives a user's default project;
// `[projects.vision]` with `users` and `groups` defines one, and once any
// is defined every job is charged to one its user is in.
Status ReadProjects(const std::string& path, const toml::table& t, GleanerConfig* config) {
  for (const auto& [key, node] : t) {
    const std::string name(key.str());
    if (const toml::table* rule = node.as_table()) {
      const std::string p = "projects." + name + ".";
      GLEANER_RETURN_IF_ERROR(
          CheckKeys(path, *rule, p, {"users", "groups", "approvers", "approver_groups"}));
      if (name.size() > 128)
        return Error(path, node, "projects." + name, "expected a name of at most 128 bytes");
      server::ProjectRule r{name, {}, {}, {}, {}};
      GLEANER_RETURN_IF_ERROR(Strings(path, *rule, p, "users", &r.users));
      GLEANER_RETURN_IF_ERROR(Strings(path, *rule, p, "groups", &r.groups));
      GLEANER_RETURN_IF_ERROR(Strings(path, *rule, p, "approvers", &r.approvers));
      GLEANER_RETURN_IF_ERROR(Strings(path, *rule, p, "approver_groups", &r.approver_groups));
      config->projects.push_back(std::move(r));
      continue;
    }
    std::optional<std::string> project = node.value<std::string>();
    if (!project) {
      return Error(path, node, "projects." + name,
                   "expected a project name (alice = \"vision\") or a [projects." + name +
                       "] table with users and groups");
    }
    config->project_of_user[name] = *project;
  }
  if (config->projects.empty()) return Status::Ok();
  // Enforced: every project named elsewhere must be defined.
  const auto defined = [&](const std::string& name) {
    return std::any_of(config->projects.begin(), config->projects.end(),
                       [&](const server::ProjectRule& r) { return r.name == name; });
  };
  for (const auto& [user, project] : config->project_of_user) {
    if (!defined(project)) {
      return Error(path, *t.get(user), "projects." + user,
                   "the default project \"" + project + "\" is not defined: add a [projects." +
                       project + "] table");
    }
  }
  return Status::Ok();
}

// [rules]: approval_timeout_s; [rules.class.NAME]: users, groups, max_gpus,
// max_runtime_s, approval; [rules.lend]: hosts, gpus.
Status ReadRules(const std::string& path, const toml::table& t, GleanerConfig* config) {
  GLEANER_RETURN_IF_ERROR(CheckKeys(path, t, "rules.", {"class", "lend", "approval_timeout_s"}));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, "rules.", "approval_timeout_s", 60, 86400.0 * 365,
                                  &config->approval_timeout));
  if (const toml::node* lend = t.get("lend")) {
    const toml::table* l = lend->as_table();
    if (l == nullptr) return Error(path, *lend, "rules.lend", "expected a table: [rules.lend]");
    GLEANER_RETURN_IF_ERROR(CheckKeys(path, *l, "rules.lend.", {"hosts", "gpus"}));
    GLEANER_RETURN_IF_ERROR(Strings(path, *l, "rules.lend.", "hosts", &config->lend_allow.hosts));
    GLEANER_RETURN_IF_ERROR(Strings(path, *l, "rules.lend.", "gpus", &config->lend_allow.gpus));
  }
  const toml::table* classes = t["class"].as_table();
  if (classes == nullptr) {
    if (const toml::node* n = t.get("class")) {
      return Error(path, *n, "rules.class", "expected [rules.class.NAME] tables");
    }
    return Status::Ok();
  }
  for (const auto& [key, node] : *classes) {
    const std::string name(key.str());
    const std::string p = "rules.class." + name + ".";
    std::optional<sched::PriorityClass> cls;
    for (auto c : {sched::PriorityClass::kCritical, sched::PriorityClass::kNormal,
                   sched::PriorityClass::kOpportunistic}) {
      if (sched::PriorityClassName(c) == name) cls = c;
    }
    const toml::table* rule = node.as_table();
    if (!cls || rule == nullptr) {
      return Error(path, node, "rules.class." + name,
                   "expected [rules.class.critical], [rules.class.normal] or "
                   "[rules.class.opportunistic]");
    }
    GLEANER_RETURN_IF_ERROR(
        CheckKeys(path, *rule, p, {"users", "groups", "max_gpus", "max_runtime_s", "approval"}));
    server::ClassRule r;
    if (const toml::node* approval = rule->get("approval")) {
      const std::optional<std::string> text = approval->value<std::string>();
      const auto parsed = text ? server::ParseApproval(*text) : std::nullopt;
      if (!parsed) {
        return Error(path, *approval, p + "approval",
                     "expected \"never\", \"over_limit\" (what breaks this rule waits for an "
                     "approver) or \"always\" (every job of the class waits)");
      }
      r.approval = *parsed;
    }
    GLEANER_RETURN_IF_ERROR(Strings(path, *rule, p, "users", &r.users));
    GLEANER_RETURN_IF_ERROR(Strings(path, *rule, p, "groups", &r.groups));
    int64_t max_gpus = 0;
    GLEANER_RETURN_IF_ERROR(WholeNumber(path, *rule, p, "max_gpus", 0, 1 << 20, &max_gpus));
    r.max_gpus = static_cast<int>(max_gpus);
    GLEANER_RETURN_IF_ERROR(
        Seconds(path, *rule, p, "max_runtime_s", 0, 86400.0 * 3650, &r.max_runtime));
    config->class_rules[*cls] = std::move(r);
  }
  return Status::Ok();
}

// [sessions]: the class and the longest run of interactive sessions.
Status ReadSessions(const std::string& path, const toml::table& t, server::SessionRule* rule) {
  GLEANER_RETURN_IF_ERROR(CheckKeys(path, t, "sessions.", {"class", "max_runtime_s"}));
  if (const toml::node* node = t.get("class")) {
    const std::optional<std::string> name = node->value<std::string>();
    std::optional<sched::PriorityClass> cls;
    for (auto c : {sched::PriorityClass::kCritical, sched::PriorityClass::kNormal,
                   sched::PriorityClass::kOpportunistic}) {
      if (name && sched::PriorityClassName(c) == *name) cls = c;
    }
    if (!cls) {
      return Error(path, *node, "sessions.class",
                   "expected \"critical\", \"normal\" or \"opportunistic\"");
    }
    rule->priority_class = *cls;
  }
  return Seconds(path, t, "sessions.", "max_runtime_s", 60, 86400.0 * 365, &rule->max_runtime);
}

Status ReadParking(const std::string& path, const toml::table& t, GleanerConfig* config) {
  const std::string p = "parking.";
  GLEANER_RETURN_IF_ERROR(CheckKeys(
      path, t, p,
      {"enabled", "park_idle_timeout_s", "notice_s", "max_park_s", "host_memory_margin_share",
       "never_park_users", "lock_timeout_s", "cuda_library"}));
  observe::ParkingConfig& c = config->parking;
  if (const toml::node* n = t.get("enabled")) {
    if (!n->is_boolean()) return Error(path, *n, p + "enabled", "expected true or false");
    c.enabled = *n->value<bool>();
  }
  GLEANER_RETURN_IF_ERROR(
      Seconds(path, t, p, "park_idle_timeout_s", 60, 86400 * 30, &c.park_idle_timeout));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "notice_s", 0, 86400, &c.notice));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "max_park_s", 0, 86400 * 30, &c.max_park));
  GLEANER_RETURN_IF_ERROR(
      Number(path, t, p, "host_memory_margin_share", 0, 0.9, &c.host_memory_margin_share));
  GLEANER_RETURN_IF_ERROR(Strings(path, t, p, "never_park_users", &c.never_park_users));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "lock_timeout_s", 0.1, 600, &c.lock_timeout));
  if (const toml::node* n = t.get("cuda_library")) {
    const std::optional<std::string> lib = n->value<std::string>();
    if (!lib || lib->empty()) {
      return Error(path, *n, p + "cuda_library", "expected the path of libcuda.so.1");
    }
    config->cuda_library = *lib;
  }
  return Status::Ok();
}

Status ReadIdle(const std::string& path, const toml::table& t, observe::IdleConfig* c) {
  const std::string p = "idle.";
  GLEANER_RETURN_IF_ERROR(CheckKeys(
      path, t, p,
      {"busy_utilization_pct", "idle_after_s", "idle_after_with_history_s", "held_idle_after_s",
       "horizon_s", "min_confidence", "min_expected_quiet_s", "trusted_pauses", "max_sample_gap_s",
       "max_restart_gap_s", "power_activity_share", "max_temperature_c", "protected_gpus",
       "protected_users", "protected_commands", "reserved_gpus"}));
  GLEANER_RETURN_IF_ERROR(
      Number(path, t, p, "busy_utilization_pct", 0, 100, &c->busy_utilization_pct));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "idle_after_s", 1, 86400, &c->idle_after));
  GLEANER_RETURN_IF_ERROR(
      Seconds(path, t, p, "idle_after_with_history_s", 1, 86400, &c->idle_after_with_history));
  GLEANER_RETURN_IF_ERROR(
      Seconds(path, t, p, "held_idle_after_s", 1, 86400 * 7, &c->held_idle_after));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "horizon_s", 60, 86400, &c->horizon));
  GLEANER_RETURN_IF_ERROR(Number(path, t, p, "min_confidence", 0, 1, &c->min_confidence));
  GLEANER_RETURN_IF_ERROR(
      Seconds(path, t, p, "min_expected_quiet_s", 0, 86400 * 7, &c->min_expected_quiet));
  double trusted = static_cast<double>(c->trusted_pauses);
  GLEANER_RETURN_IF_ERROR(Number(path, t, p, "trusted_pauses", 0, 1e9, &trusted));
  c->trusted_pauses = static_cast<int64_t>(trusted);
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "max_sample_gap_s", 1, 86400, &c->max_sample_gap));
  GLEANER_RETURN_IF_ERROR(Seconds(path, t, p, "max_restart_gap_s", 0, 86400, &c->max_restart_gap));
  GLEANER_RETURN_IF_ERROR(
      Number(path, t, p, "power_activity_share", 0, 1, &c->power_activity_share));
  double max_temp = c->max_temperature_c;
  GLEANER_RETURN_IF_ERROR(Number(path, t, p, "max_temperature_c", 0, 150, &max_temp));
  c->max_temperature_c = static_cast<int32_t>(max_temp);
  std::vector<std::string> gpus;
  GLEANER_RETURN_IF_ERROR(Strings(path, t, p, "protected_gpus", &gpus));
  for (const std::string& g : gpus) c->protected_gpus.emplace_back(g);
  gpus.clear();
  GLEANER_RETURN_IF_ERROR(Strings(path, t, p, "reserved_gpus", &gpus));
  for (const std::string& g : gpus) c->reserved_gpus.emplace_back(g);
  GLEANER_RETURN_IF_ERROR(Strings(path, t, p, "protected_users", &c->protected_users));
  return Strings(path, t, p, "protected_commands", &c->protected_commands);
}

Status ReadAlerts(const std::string& path, const toml::table& t, GleanerConfig* c) {
  GLEANER_RETURN_IF_ERROR(CheckKeys(path, t, "alerts.", {"webhook_url", "rule"}));
  if (const toml::node* url = t.get("webhook_url")) {
    std::optional<std::string> s = url->value<std::string>();
    if (!s || (s->rfind("https://", 0) != 0 && s->rfind("http://", 0) != 0)) {
      return Error(path, *url, "alerts.webhook_url", "expected an https:// or http:// URL");
    }
    c->alert_webhook_url = *s;
  }
  const toml::node* rules = t.get("rule");
  if (rules == nullptr) return Status::Ok();
  const toml::array* list = rules->as_array();
  if (list == nullptr) return Error(path, *rules, "alerts.rule", "expected [[alerts.rule]] tables");
  for (const toml::node& item : *list) {
    const toml::table* r = item.as_table();
    if (r == nullptr) return Error(path, item, "alerts.rule", "expected a table");
    GLEANER_RETURN_IF_ERROR(
        CheckKeys(path, *r, "alerts.rule.", {"name", "when", "for_s", "threshold", "severity"}));
    observe::AlertRule rule;
    rule.name = r->get("name") ? r->get("name")->value<std::string>().value_or("") : "";
    if (rule.name.empty())
      return Error(path, item, "alerts.rule.name", "missing; expected a string");
    const std::string when =
        r->get("when") ? r->get("when")->value<std::string>().value_or("") : "";
    bool known = false;
    for (observe::AlertCondition cond :
         {observe::AlertCondition::kIdle, observe::AlertCondition::kHeldIdle,
          observe::AlertCondition::kTemperatureAbove, observe::AlertCondition::kPowerAbove,
          observe::AlertCondition::kGpuLost}) {
      if (observe::AlertConditionName(cond) == when) {
        rule.condition = cond;
        known = true;
      }
    }
    if (!known) {
      return Error(path, r->get("when") ? *r->get("when") : item, "alerts.rule.when",
                   "expected one of: idle, held_idle, temperature_above, power_above, lost");
    }
    GLEANER_RETURN_IF_ERROR(
        Seconds(path, *r, "alerts.rule.", "for_s", 0, 86400 * 30, &rule.for_duration));
    GLEANER_RETURN_IF_ERROR(
        Number(path, *r, "alerts.rule.", "threshold", -1e9, 1e9, &rule.threshold));
    if (const toml::node* sev = r->get("severity")) {
      if (!sev->is_string()) return Error(path, *sev, "alerts.rule.severity", "expected a string");
      rule.severity = *sev->value<std::string>();
    }
    c->alert_rules.push_back(std::move(rule));
  }
  return Status::Ok();
}

Status ReadScheduler(const std::string& path, const toml::table& t, sched::SchedulerConfig* c) {
  GLEANER_RETURN_IF_ERROR(CheckKeys(path, t, "scheduler.",
                                    {"min_runtime_s", "usage_half_life_s", "backfill", "cost_aware",
                                     "window_aware_placement", "project", "reservation"}));
  GLEANER_RETURN_IF_ERROR(
      Seconds(path, t, "scheduler.", "min_runtime_s", 0, 86400 * 30, &c->min_runtime));
  GLEANER_RETURN_IF_ERROR(
      Seconds(path, t, "scheduler.", "usage_half_life_s", 60, 86400 * 365, &c->usage_half_life));
  if (const toml::node* b = t.get("backfill")) {
    if (!b->is_boolean()) return Error(path, *b, "scheduler.backfill", "expected true or false");
    c->backfill = *b->value<bool>();
  }
  if (const toml::node* b = t.get("window_aware_placement")) {
    if (!b->is_boolean()) {
      return Error(path, *b, "scheduler.window_aware_placement", "expected true or false");
    }
    c->window_aware_placement = *b->value<bool>();
  }
  if (const toml::node* b = t.get("cost_aware")) {
    if (!b->is_boolean()) return Error(path, *b, "scheduler.cost_aware", "expected true or false");
    c->cost_aware = *b->value<bool>();
  }
  if (const toml::node* projects = t.get("project")) {
    const toml::table* table = projects->as_table();
    if (table == nullptr) {
      return Error(path, *projects, "scheduler.project", "expected [scheduler.project.NAME]");
    }
    for (const auto& [name, node] : *table) {
      const std::string p = "scheduler.project." + std::string(name.str()) + ".";
      const toml::table* q = node.as_table();
      if (q == nullptr) return Error(path, node, p, "expected a table");
      GLEANER_RETURN_IF_ERROR(
          CheckKeys(path, *q, p, {"guaranteed_gpus", "borrow_limit_gpus", "weight"}));
      sched::ProjectQuota quota;
      double guaranteed = 0;
      GLEANER_RETURN_IF_ERROR(Number(path, *q, p, "guaranteed_gpus", 0, 1e6, &guaranteed));
      quota.guaranteed_gpus = static_cast<int>(guaranteed);
      if (q->get("borrow_limit_gpus")) {
        double limit = 0;
        GLEANER_RETURN_IF_ERROR(Number(path, *q, p, "borrow_limit_gpus", 0, 1e6, &limit));
        quota.borrow_limit_gpus = static_cast<int>(limit);
      }
      GLEANER_RETURN_IF_ERROR(Number(path, *q, p, "weight", 0.001, 1e6, &quota.weight));
      c->projects[std::string(name.str())] = quota;
    }
  }
  const toml::node* reservations = t.get("reservation");
  if (reservations == nullptr) return Status::Ok();
  const toml::array* list = reservations->as_array();
  if (list == nullptr) {
    return Error(path, *reservations, "scheduler.reservation",
                 "expected [[scheduler.reservation]] tables");
  }
  for (const toml::node& item : *list) {
    const toml::table* r = item.as_table();
    if (r == nullptr) return Error(path, item, "scheduler.reservation", "expected a table");
    const std::string p = "scheduler.reservation.";
    GLEANER_RETURN_IF_ERROR(
        CheckKeys(path, *r, p, {"name", "project", "gpus", "gpu_model", "starts_at", "ends_at"}));
    sched::Reservation res;
    res.name = r->get("name") ? r->get("name")->value<std::string>().value_or("") : "";
    res.project = r->get("project") ? r->get("project")->value<std::string>().value_or("") : "";
    res.gpu_model =
        r->get("gpu_model") ? r->get("gpu_model")->value<std::string>().value_or("") : "";
    double gpus = 1;
    GLEANER_RETURN_IF_ERROR(Number(path, *r, p, "gpus", 1, 1e6, &gpus));
    res.gpus = static_cast<int>(gpus);
    for (const auto& [key, field] :
         {std::pair{"starts_at", &res.starts_at}, std::pair{"ends_at", &res.ends_at}}) {
      if (const toml::node* n = r->get(key)) {
        GLEANER_ASSIGN_OR_RETURN(*field, Instant(path, *n, p + key));
      }
    }
    if (Status s = sched::ValidateReservation(res); !s.ok()) {
      return Error(path, item, "scheduler.reservation", s.message());
    }
    c->reservations.push_back(std::move(res));
  }
  return sched::Scheduler::CheckConfig(*c).WithContext(path);
}

}  // namespace

core::Result<GleanerConfig> LoadConfig(const std::string& path, bool must_exist) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (ec) return core::InvalidArgument("cannot read the config file " + path + ": " + ec.message());
  if (!exists) {
    if (must_exist) return core::NotFound("no config file " + path);
    GleanerConfig defaults;
    defaults.scheduler.model_price = ModelPrices(defaults.cost);
    return defaults;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::InvalidArgument("cannot read the config file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseConfig(text.str(), path);
}

namespace {

nlohmann::json NodeToJson(const toml::node& node) {
  if (const toml::table* t = node.as_table()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : *t) out[std::string(key.str())] = NodeToJson(value);
    return out;
  }
  if (const toml::array* a = node.as_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const toml::node& value : *a) out.push_back(NodeToJson(value));
    return out;
  }
  if (const auto* v = node.as_string()) return v->get();
  if (const auto* v = node.as_integer()) {
    // As a JSON parser reads a whole number: unsigned when not negative.
    if (v->get() >= 0) return static_cast<uint64_t>(v->get());
    return v->get();
  }
  if (const auto* v = node.as_floating_point()) return v->get();
  if (const auto* v = node.as_boolean()) return v->get();
  std::ostringstream text;  // dates and times, as TOML writes them
  if (const auto* v = node.as_date()) text << *v;
  if (const auto* v = node.as_time()) text << *v;
  if (const auto* v = node.as_date_time()) text << *v;
  return text.str();
}

}  // namespace

core::Result<nlohmann::json> TomlToJson(std::string_view text, const std::string& path) {
  GLEANER_ASSIGN_OR_RETURN(const std::string checked, WithoutNonAscii(text, path));
  try {
    return NodeToJson(toml::parse(checked, path));
  } catch (const toml::parse_error& e) {
    return core::InvalidArgument(path + ":" + std::to_string(e.source().begin.line) + ": " +
                                 std::string(e.description()));
  }
}

core::Result<GleanerConfig> ParseConfig(std::string_view text, const std::string& path) {
  GleanerConfig config;
  GLEANER_ASSIGN_OR_RETURN(const std::string checked, WithoutNonAscii(text, path));
  toml::table doc;
  try {
    doc = toml::parse(checked, path);
  } catch (const toml::parse_error& e) {
    return core::InvalidArgument(path + ":" + std::to_string(e.source().begin.line) + ": " +
                                 std::string(e.description()));
  }
  GLEANER_RETURN_IF_ERROR(CheckKeys(
      path, doc, "",
      {"idle", "sampling", "projects", "alerts", "scheduler", "cost", "ui", "api", "limits",
       "colocation", "parking", "rules", "history", "slurm", "host", "sessions"}));
  for (const char* section :
       {"idle", "sampling", "projects", "alerts", "scheduler", "cost", "ui", "api", "limits",
        "colocation", "parking", "rules", "history", "slurm", "host", "sessions"}) {
    if (const toml::node* node = doc.get(section); node && !node->is_table()) {
      return Error(path, *node, section, "expected a table: [" + std::string(section) + "]");
    }
  }
  if (const toml::table* idle = doc["idle"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadIdle(path, *idle, &config.idle));
  }
  if (const toml::table* c = doc["colocation"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadColocation(path, *c, &config.colocation));
  }
  if (const toml::table* p = doc["parking"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadParking(path, *p, &config));
  }
  if (const toml::table* r = doc["rules"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadRules(path, *r, &config));
  }
  if (const toml::table* s = doc["sampling"].as_table()) {
    GLEANER_RETURN_IF_ERROR(CheckKeys(path, *s, "sampling.", {"interval_s", "retention_days"}));
    GLEANER_RETURN_IF_ERROR(
        Seconds(path, *s, "sampling.", "interval_s", 0.1, 3600, &config.sample_interval));
    double days = core::ToSecondsDouble(config.retention) / 86400;
    GLEANER_RETURN_IF_ERROR(Number(path, *s, "sampling.", "retention_days", 1, 36500, &days));
    config.retention = core::Duration(static_cast<int64_t>(days * 86400e6));
  }
  if (const toml::table* h = doc["history"].as_table()) {
    GLEANER_RETURN_IF_ERROR(CheckKeys(path, *h, "history.", {"retention_days"}));
    double days = core::ToSecondsDouble(config.history_retention) / 86400;
    GLEANER_RETURN_IF_ERROR(Number(path, *h, "history.", "retention_days", 1, 36500, &days));
    config.history_retention = core::Duration(static_cast<int64_t>(days * 86400e6));
  }
  if (const toml::table* projects = doc["projects"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadProjects(path, *projects, &config));
  }
  if (const toml::table* alerts = doc["alerts"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadAlerts(path, *alerts, &config));
  }
  if (const toml::table* scheduler = doc["scheduler"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadScheduler(path, *scheduler, &config.scheduler));
  }
  if (const toml::table* cost = doc["cost"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadCost(path, *cost, &config.cost));
  }
  if (const toml::table* ui = doc["ui"].as_table()) {
    GLEANER_RETURN_IF_ERROR(
        CheckKeys(path, *ui, "ui.", {"anonymous_read", "hide_others_commands"}));
    if (const toml::node* n = ui->get("anonymous_read")) {
      if (!n->is_boolean()) return Error(path, *n, "ui.anonymous_read", "expected true or false");
      config.ui_anonymous_read = *n->value<bool>();
    }
    if (const toml::node* n = ui->get("hide_others_commands")) {
      if (!n->is_boolean()) {
        return Error(path, *n, "ui.hide_others_commands", "expected true or false");
      }
      config.ui_hide_others_commands = *n->value<bool>();
    }
  }
  if (const toml::table* api = doc["api"].as_table()) {
    GLEANER_RETURN_IF_ERROR(
        CheckKeys(path, *api, "api.", {"allow_root_tokens", "token_lifetime_days"}));
    if (const toml::node* n = api->get("allow_root_tokens")) {
      if (!n->is_boolean())
        return Error(path, *n, "api.allow_root_tokens", "expected true or false");
      config.tokens.allow_root = *n->value<bool>();
    }
    double days = core::ToSecondsDouble(config.tokens.lifetime) / 86400;
    GLEANER_RETURN_IF_ERROR(Number(path, *api, "api.", "token_lifetime_days", 1, 3650, &days));
    config.tokens.lifetime = core::Duration(static_cast<int64_t>(days * 86400e6));
  }
  if (const toml::table* limits = doc["limits"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadLimits(path, *limits, &config.submit_limits));
  }
  if (const toml::table* slurm = doc["slurm"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadSlurm(path, *slurm, &config.slurm));
  }
  if (const toml::table* host = doc["host"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadHost(path, *host, &config.host));
  }
  if (const toml::table* sessions = doc["sessions"].as_table()) {
    GLEANER_RETURN_IF_ERROR(ReadSessions(path, *sessions, &config.sessions));
  }
  // Samples further apart than the gap allowance would all be gaps.
  config.idle.max_sample_gap = std::max(config.idle.max_sample_gap, 3 * config.sample_interval);
  // Enforced projects: a quota or reservation for one nobody can be in is
  // a typo that would never apply.
  if (!config.projects.empty()) {
    std::vector<std::string> named;
    for (const auto& [name, quota] : config.scheduler.projects) named.push_back(name);
    for (const sched::Reservation& r : config.scheduler.reservations) named.push_back(r.project);
    for (const std::string& name : named) {
      if (std::none_of(config.projects.begin(), config.projects.end(),
                       [&](const server::ProjectRule& r) { return r.name == name; })) {
        return core::InvalidArgument(path + ": [scheduler] names project \"" + name +
                                     "\", which no [projects." + name + "] table defines");
      }
    }
  }
  config.scheduler.model_price = ModelPrices(config.cost);
  config.scheduler.currency = std::string(cost::CurrencyName(config.cost.currency));
  return config;
}

std::vector<std::string> ChangedSections(std::string_view before, std::string_view after,
                                         const std::vector<std::string>& live) {
  toml::table a;
  toml::table b;
  try {
    a = toml::parse(before);
    b = toml::parse(after);
  } catch (const toml::parse_error&) {
    return {};  // both were checked before; nothing to compare otherwise
  }
  std::set<std::string> names;
  for (const auto& [key, node] : a) names.insert(std::string(key.str()));
  for (const auto& [key, node] : b) names.insert(std::string(key.str()));
  std::vector<std::string> changed;
  for (const std::string& name : names) {
    if (std::find(live.begin(), live.end(), name) != live.end()) continue;
    const toml::node* x = a.get(name);
    const toml::node* y = b.get(name);
    const bool same =
        (x == nullptr && y == nullptr) || (x != nullptr && y != nullptr && x->is_table() &&
                                           y->is_table() && *x->as_table() == *y->as_table());
    if (!same) changed.push_back(name);
  }
  return changed;
}

std::string ConfigPath(const std::string& data_dir, const std::string& config_flag) {
  if (!config_flag.empty()) return config_flag;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(data_dir).lexically_normal();
  const bool system = dir == kSystemDataDir || dir == std::string(kSystemDataDir) + "/";
  if (system && std::filesystem::exists(kSystemConfig, ec)) {
    return kSystemConfig;
  }
  return data_dir + "/gleaner.toml";
}

core::Result<GleanerConfig> LoadCommandConfig(const std::string& data_dir,
                                              const std::string& config_flag) {
  return LoadConfig(ConfigPath(data_dir, config_flag), !config_flag.empty());
}

}  // namespace gleaner::config
