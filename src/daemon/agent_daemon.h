#pragma once

// `gleaner agent`: one per GPU host. It samples and judges the host's GPUs
// as `gleaner up` does, keeps the host's own history, reports to the
// leading coordinator and runs what it assigns.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "daemon/daemon_start.h"
#include "daemon/gpu_source.h"
#include "net/http_client.h"

namespace gleaner::daemon {

struct AgentDaemonOptions {
  std::string name;  // this host's name in the cluster
  std::string rack;  // for gangs over several nodes; empty: none
  std::vector<net::Endpoint> coordinators;
  std::string servers;          // the coordinators as given, for the log
  std::string join_token_file;  // empty: none given
  // Where this host's /metrics is served (no token); nullopt: nowhere.
  std::optional<std::pair<std::string, uint16_t>> metrics_listen;
  std::optional<double> for_s;  // stop after this long; nullopt: at a signal
};

// Runs the agent on `source`'s GPUs until a signal (or `for_s`), logging
// to `out`. An error says why it could not start: kUnavailable where a
// coordinator, the store or a port is not to be had now, another code
// where what it was given is wrong.
core::Status RunAgentDaemon(const AgentDaemonOptions& options, DaemonBase& base, GpuSource source,
                            const core::Clock& clock, std::ostream& out);

}  // namespace gleaner::daemon
