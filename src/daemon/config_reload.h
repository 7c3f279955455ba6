#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster/log.h"
#include "config/config_file.h"

namespace gleaner::daemon {

// A daemon's config file read again on SIGHUP (`gleaner server` and
// `gleaner agent`; `gleaner up` keeps versions of it: DaemonPolicy). The
// file is checked whole first: an error names file:line and the running
// config stays. A good one is handed back for the sections the daemon
// takes up live (`live`), and any other section that changed is named as
// waiting for the next restart.
class ConfigReload {
 public:
  // `path`: the file the daemon started from, `text` what it read there
  // ("": no file, defaults).
  ConfigReload(std::string path, std::string text, std::vector<std::string> live);

  // On SIGHUP: the config to apply now, or nullopt where the file is
  // wrong or none of `live` changed (only comments, or only sections that
  // wait for a restart); what happened goes to `log` either way.
  std::optional<config::GleanerConfig> Reload(const cluster::Log& log);

 private:
  const std::string path_;
  const std::vector<std::string> live_;
  std::string active_text_;  // what runs
};

}  // namespace gleaner::daemon
