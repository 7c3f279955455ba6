#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cluster/log.h"
#include "config/config_file.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "server/policy_api.h"
#include "store/store.h"

namespace gleaner::daemon {

// The policy `gleaner up` runs (docs/policy.md): gleaner.toml, versioned in
// the store. An applied version is checked whole (errors name file:line
// and the running one stays), written to the config file (so a restart
// runs it too) and recorded; the daemon's loop takes it up at its next
// pass (TakePending). The idle rules ([idle]), the usage rules
// ([projects], [rules]) and the scheduler's ([scheduler]) take effect then;
// other sections that changed are named as taking effect at the next
// restart. Thread-safe.
class DaemonPolicy final : public server::PolicyControl {
 public:
  // What the loop applies: the config, and which version it is.
  struct Pending {
    config::GleanerConfig config;
    store::PolicyVersion version;
  };

  // `store`: a connection of its own.
  DaemonPolicy(std::string config_path, std::unique_ptr<store::Store> store,
               const core::Clock& clock)
      : path_(std::move(config_path)), clock_(clock), store_(std::move(store)) {}

  // The config file as it is at start (`text`, already checked):
  // recorded as a new version where it differs from the latest.
  core::Status Start(const std::string& text, const cluster::Log& log);

  core::Result<Applied> Apply(const std::string& text, const std::string& name,
                              const std::string& author, const std::string& note,
                              const std::string& event, bool force) override;
  int64_t ActiveVersion() const override;

  // The version applied since the last call, if any.
  std::optional<Pending> TakePending();

  // On SIGHUP: the config file again, applied where it changed; what
  // happened goes to `log`.
  void Reload(const cluster::Log& log);

  // The sections that take effect without a restart.
  static const std::vector<std::string>& LiveSections();

 private:
  const std::string path_;
  const core::Clock& clock_;
  mutable core::Mutex mu_;
  const std::unique_ptr<store::Store> store_ GLEANER_PT_GUARDED_BY(mu_);
  int64_t active_ GLEANER_GUARDED_BY(mu_) = 0;
  std::string active_text_ GLEANER_GUARDED_BY(mu_);
  std::optional<Pending> pending_ GLEANER_GUARDED_BY(mu_);
};

// What in `config`'s usage rules would lock every user but root out, on
// this host (server::LockOuts).
std::vector<std::string> LockOutsOf(const config::GleanerConfig& config);

// The config file's text; "" where there is none.
core::Result<std::string> ReadConfigText(const std::string& path);

}  // namespace gleaner::daemon
