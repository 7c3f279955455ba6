#include "cli/daemon_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/private_file.h"

namespace gleaner::cli {

const std::vector<std::string>& DaemonPolicy::LiveSections() {
  static const std::vector<std::string> kLive = {"projects", "rules", "scheduler"};
  return kLive;
}

core::Result<std::string> ReadConfigText(const std::string& path) {
  auto text = core::ReadPrivateFile(path);
  if (!text.ok() && text.status().code() == core::StatusCode::kNotFound) return std::string();
  return text;
}

namespace {

// Replaces `path` with `text` whole, keeping its mode: written to a file
// created beside it (never one found there), flushed, renamed over it. A
// file that holds `text` already is left alone.
core::Status ReplaceFile(const std::string& path, const std::string& text) {
  if (auto now = core::ReadPrivateFile(path); now.ok() && *now == text) return core::Status::Ok();
  struct stat st {};
  const int mode = lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)
                       ? static_cast<int>(st.st_mode & 0666)
                       : 0600;
  const std::string next = path + ".new";
  if (unlink(next.c_str()) != 0 && errno != ENOENT) {
    return core::Unavailable("cannot replace " + next + ": " + std::strerror(errno));
  }
  GLEANER_RETURN_IF_ERROR(core::CreatePrivateFile(next, text, mode));
  if (std::rename(next.c_str(), path.c_str()) != 0) {
    return core::Unavailable("cannot replace " + path + ": " + std::strerror(errno));
  }
  return core::Status::Ok();
}

}  // namespace

core::Status DaemonPolicy::Start(const std::string& text, const cluster::Log& log) {
  std::lock_guard lock(mu_);
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

core::Result<server::PolicyControl::Applied> DaemonPolicy::Apply(const std::string& text,
                                                                 const std::string& name,
                                                                 const std::string& author,
                                                                 const std::string& note,
                                                                 const std::string& event) {
  // Checked whole first: a policy with errors changes nothing.
  GLEANER_ASSIGN_OR_RETURN(GleanerConfig config, ParseConfig(text, name));
  std::lock_guard lock(mu_);
  Applied applied;
  applied.at_restart = ChangedSections(active_text_, text, LiveSections());
  GLEANER_RETURN_IF_ERROR(ReplaceFile(path_, text));
  auto saved = store_->AddPolicy({0, clock_.Now(), author, note, text}, event);
  if (!saved.ok()) {
    ReplaceFile(path_, active_text_).IgnoreError();  // the file stays what runs
    return saved.status();
  }
  applied.version = *saved;
  active_ = saved->version;
  active_text_ = text;
  pending_ = Pending{std::move(config), *saved};
  return applied;
}

int64_t DaemonPolicy::ActiveVersion() const {
  std::lock_guard lock(mu_);
  return active_;
}

std::optional<DaemonPolicy::Pending> DaemonPolicy::TakePending() {
  std::lock_guard lock(mu_);
  std::optional<Pending> taken = std::move(pending_);
  pending_.reset();
  return taken;
}

void DaemonPolicy::Reload(const cluster::Log& log) {
  auto text = ReadConfigText(path_);
  if (!text.ok()) {
    log("SIGHUP: " + text.status().message() + "; policy version " +
        std::to_string(ActiveVersion()) + " runs on");
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (*text == active_text_) {
      log("SIGHUP: " + path_ + " is unchanged; policy version " + std::to_string(active_) +
          " runs on");
      return;
    }
  }
  auto applied = Apply(*text, path_, "SIGHUP", path_ + " changed", "policy_applied");
  if (!applied.ok()) {
    log("SIGHUP: " + applied.status().message() + "; policy version " +
        std::to_string(ActiveVersion()) + " runs on");
  }
}

}  // namespace gleaner::cli
