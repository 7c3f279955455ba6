#pragma once

#include <memory>
#include <string>

#include "cluster/log.h"
#include "config/config_file.h"
#include "core/result.h"
#include "server/api.h"
#include "store/store.h"

namespace gleaner::daemon {

// What every API a daemon serves shares: jobs run as local users, their logs
// in DATA_DIR/logs, history and prices from `observations` and the config's
// [cost], [ui] anonymous_read. The catalog's error names the config file.
// `log` hears of approvals asked for and given, which also go to the alert
// webhook where one is configured.
core::Result<server::ApiOptions> DaemonApiOptions(const std::string& data_dir,
                                                  const std::string& config_path,
                                                  const config::GleanerConfig& config,
                                                  store::ObservationStore* observations,
                                                  const cluster::Log& log);

// Who may submit what ([projects], [rules], [sessions]), as the API takes it.
std::shared_ptr<const server::SubmitPolicy> SubmitPolicyOf(const config::GleanerConfig& config);

}  // namespace gleaner::daemon
