#include "daemon/api_options.h"

#include <memory>

#include "agent/alert_webhook.h"
#include "agent/process_info.h"
#include "config/catalog_files.h"
#include "core/host_name.h"

namespace gleaner::daemon {

namespace {

// Where approvals asked for and given are told: the log, and the alert
// webhook where there is one.
server::NotifyApproval ApprovalNotifier(const std::string& webhook_url, const cluster::Log& log) {
  std::shared_ptr<agent::AlertWebhook> webhook;
  if (!webhook_url.empty()) {
    webhook = std::make_shared<agent::AlertWebhook>(
        agent::AlertWebhook::Options{webhook_url, core::Hostname()}, log);
  }
  return [webhook, log](const server::ApprovalNotice& n) {
    log(n.summary);
    if (!webhook) return;
    // Asked for, an approval fires; decided, it is resolved, saying how.
    observe::AlertEvent e;
    e.rule = "approval_requested";
    e.job = std::to_string(n.job);
    e.firing = n.kind == "approval_requested";
    e.starts_at = e.ends_at = core::RealClock().Now();
    e.severity = "info";
    e.summary = n.summary;
    e.users = n.users;
    webhook->Send({e});
  };
}

}  // namespace

core::Result<server::ApiOptions> DaemonApiOptions(const std::string& data_dir,
                                                  const std::string& config_path,
                                                  const config::GleanerConfig& config,
                                                  store::ObservationStore* observations,
                                                  const cluster::Log& log) {
  server::ApiOptions options;
  options.log_dir = data_dir + "/logs";
  options.user_name = agent::UserName;
  options.uid_of = agent::UserId;
  options.observations = observations;
  auto catalog = config::LoadCatalog(config.cost.catalog_files);
  if (!catalog.ok()) {
    return core::InvalidArgument(catalog.status().message() + " ([cost] catalogs in " +
                                 config_path + ")");
  }
  options.cost.catalog = std::move(catalog).value();
  options.cost.settings = config.cost;
  options.cost.project_of_user = config.project_of_user;
  options.anonymous_read = config.ui_anonymous_read;
  options.hide_others_commands = config.ui_hide_others_commands.value_or(config.ui_anonymous_read);
  options.tokens = config.tokens;
  options.submit_limits = config.submit_limits;
  options.submit_policy = SubmitPolicyOf(config);
  options.notify_approval = ApprovalNotifier(config.alert_webhook_url, log);
  return options;
}

std::shared_ptr<const server::SubmitPolicy> SubmitPolicyOf(const config::GleanerConfig& config) {
  return std::make_shared<const server::SubmitPolicy>(
      server::ProjectMembership(config.projects, config.project_of_user), config.class_rules,
      config.sessions);
}

}  // namespace gleaner::daemon
