#include "daemon/config_reload.h"

#include <utility>

#include "config/trusted_paths.h"
#include "daemon/daemon_policy.h"

namespace gleaner::daemon {

namespace {

std::string SectionList(const std::vector<std::string>& sections) {
  std::string list;
  for (const std::string& s : sections) list += (list.empty() ? "[" : ", [") + s + "]";
  return list;
}

}  // namespace

ConfigReload::ConfigReload(std::string path, std::string text, std::vector<std::string> live)
    : path_(std::move(path)), live_(std::move(live)), active_text_(std::move(text)) {}

std::optional<config::GleanerConfig> ConfigReload::Reload(const cluster::Log& log) {
  const std::string stays = "; the running config stays";
  if (auto trusted = config::TrustedConfigPath(path_); !trusted.ok()) {
    log("SIGHUP: " + trusted.status().message() + stays);
    return std::nullopt;
  }
  auto text = ReadConfigText(path_);
  if (!text.ok()) {
    log("SIGHUP: " + text.status().message() + stays);
    return std::nullopt;
  }
  if (*text == active_text_) {
    log("SIGHUP: " + path_ + " is unchanged");
    return std::nullopt;
  }
  auto parsed = config::ParseConfig(*text, path_);
  if (!parsed.ok()) {
    log("SIGHUP: " + parsed.status().message() + stays);
    return std::nullopt;
  }
  const std::vector<std::string> later = config::ChangedSections(active_text_, *text, live_);
  const bool live_changed = config::ChangedSections(active_text_, *text, {}).size() > later.size();
  active_text_ = std::move(text).value();
  const std::string waiting =
      later.empty() ? ""
                    : "; " + SectionList(later) + " changed and take effect at the next restart";
  // Nothing to apply now: the daemon is not reconfigured for a comment or
  // for a section it takes up only when it starts.
  if (!live_changed) {
    log("SIGHUP: " + path_ + " read again; nothing in " + SectionList(live_) + " changed" +
        waiting);
    return std::nullopt;
  }
  log("SIGHUP: " + path_ + " read again; " + SectionList(live_) + " in effect" + waiting);
  return std::move(parsed).value();
}

}  // namespace gleaner::daemon
