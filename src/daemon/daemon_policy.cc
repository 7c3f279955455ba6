#include "daemon/daemon_policy.h"

#include "config/trusted_paths.h"
#include "core/private_file.h"

namespace gleaner::daemon {

const std::vector<std::string>& DaemonPolicy::LiveSections() {
  static const std::vector<std::string> kLive = {"idle", "projects", "rules", "scheduler"};
  return kLive;
}

core::Result<std::string> ReadConfigText(const std::string& path) {
  auto text = core::ReadPrivateFile(path);
  if (!text.ok() && text.status().code() == core::StatusCode::kNotFound) return std::string();
  return text;
}

std::vector<std::string> LockOutsOf(const config::GleanerConfig& config) {
  return server::LockOuts(config.projects, config.class_rules, server::ThisHostNames());
}

core::Status DaemonPolicy::Start(const std::string& text, const cluster::Log& log) {
  core::MutexLock lock(mu_);
  auto latest = store_->GetPolicy(0);
  if (latest.ok() && latest->text == text) {
    active_ = latest->version;
    active_text_ = text;
    log("policy version " + std::to_string(active_) + " (" + path_ + ")");
    return core::Status::Ok();
  }
  if (!latest.ok() && latest.status().code() != core::StatusCode::kNotFound) {
    return latest.status();
  }
  const std::string note =
      latest.ok() ? path_ + " changed while gleaner was stopped" : path_ + " at the first start";
  auto saved = store_->AddPolicy({0, clock_.Now(), "gleaner.toml", note, text}, "policy_applied");
  GLEANER_RETURN_IF_ERROR(saved.status());
  active_ = saved->version;
  active_text_ = text;
  log("policy version " + std::to_string(active_) + ": " + note);
  return core::Status::Ok();
}

core::Result<server::PolicyControl::Applied> DaemonPolicy::Apply(
    const std::string& text, const std::string& name, const std::string& author,
    const std::string& note, const std::string& event, bool force) {
  // Checked whole first: a policy with errors changes nothing.
  GLEANER_ASSIGN_OR_RETURN(config::GleanerConfig config, config::ParseConfig(text, name));
  if (const std::vector<std::string> out = LockOutsOf(config); !out.empty() && !force) {
    std::string why;
    for (const std::string& o : out) why += (why.empty() ? "" : "; ") + o;
    return core::FailedPrecondition(name + " would lock users out: " + why +
                                    ". Fix it, or apply it anyway with --force");
  }
  core::MutexLock lock(mu_);
  Applied applied;
  applied.at_restart = config::ChangedSections(active_text_, text, LiveSections());
  GLEANER_RETURN_IF_ERROR(core::ReplaceFile(path_, text));
  auto saved = store_->AddPolicy({0, clock_.Now(), author, note, text}, event);
  if (!saved.ok()) {
    core::ReplaceFile(path_, active_text_).IgnoreError();  // the file stays what runs
    return saved.status();
  }
  applied.version = *saved;
  active_ = saved->version;
  active_text_ = text;
  pending_ = Pending{std::move(config), *saved};
  return applied;
}

int64_t DaemonPolicy::ActiveVersion() const {
  core::MutexLock lock(mu_);
  return active_;
}

std::optional<DaemonPolicy::Pending> DaemonPolicy::TakePending() {
  core::MutexLock lock(mu_);
  std::optional<Pending> taken = std::move(pending_);
  pending_.reset();
  return taken;
}

void DaemonPolicy::Reload(const cluster::Log& log) {
  if (auto trusted = config::TrustedConfigPath(path_); !trusted.ok()) {
    log("SIGHUP: " + trusted.status().message() + "; policy version " +
        std::to_string(ActiveVersion()) + " runs on");
    return;
  }
  auto text = ReadConfigText(path_);
  if (!text.ok()) {
    log("SIGHUP: " + text.status().message() + "; policy version " +
        std::to_string(ActiveVersion()) + " runs on");
    return;
  }
  {
    core::MutexLock lock(mu_);
    if (*text == active_text_) {
      log("SIGHUP: " + path_ + " is unchanged; policy version " + std::to_string(active_) +
          " runs on");
      return;
    }
  }
  auto applied = Apply(*text, path_, "SIGHUP", path_ + " changed", "policy_applied", false);
  if (!applied.ok()) {
    log("SIGHUP: " + applied.status().message() + "; policy version " +
        std::to_string(ActiveVersion()) + " runs on");
  }
}

}  // namespace gleaner::daemon
