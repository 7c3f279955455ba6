// `gleaner agent`: its flags, checked, and the agent daemon
// (daemon/agent_daemon.h) started with them.

#include <optional>
#include <ostream>
#include <utility>

#include "cli/cluster_commands.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "cli/gpu_source.h"
#include "cluster/agent_credentials.h"
#include "core/host_name.h"
#include "daemon/agent_daemon.h"
#include "daemon/coordinator_client.h"
#include "daemon/daemon_start.h"
#include "net/socket_address.h"

namespace gleaner::cli {

CLI::App* AddAgentCommand(CLI::App& app, AgentOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "agent", "Lend this host's idle GPUs to a cluster's coordinators (docs/cluster.md)");
  cmd->add_option("--server", options.servers,
                  "The coordinators: http(s)://HOST:PORT, several comma-separated")
      ->required();
  AddClientTlsOptions(*cmd, options.tls, /*env=*/false);
  cmd->add_option("--join-token-file", options.join_token_file,
                  "A one-time join token from `gleaner agent-token create` (needed to join the "
                  "first time, and after an admin replaced this host)");
  // Agents once joined with the cluster's secret; say what replaced it.
  cmd->add_option("--join-secret-file", options.join_secret_file)->group("");
  cmd->add_option("--name", options.name, "This host's name in the cluster (default: hostname)");
  cmd->add_option("--rack", options.rack,
                  "The rack or leaf switch this host is under: a gang over several nodes "
                  "prefers nodes under one (docs/gangs.md)");
  cmd->add_option("--fake", options.fake, "Simulated GPUs from a scenario (demo, or a file)")
      ->type_name("SCENARIO");
  cmd->add_option("--nvml-library", options.nvml_library, "The NVML library to load")
      ->capture_default_str();
  cmd->add_option("--data-dir", options.data_dir,
                  "Where the agent keeps its credential, jobs and history");
  cmd->add_option("--config", options.config, "Config file (default: DATA_DIR/gleaner.toml)");
  cmd->add_option("--interval", options.interval_s, "Seconds between samples and reports")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--for", options.for_s, "Stop after this many seconds")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--metrics-listen", options.metrics_listen,
                  "Serve this host's /metrics (no token) on HOST:PORT, or none")
      ->capture_default_str()
      ->type_name("HOST:PORT");
  return cmd;
}

int RunAgent(const AgentOptions& options, const core::Clock& clock,
             const agent::ProcessInspector& inspector, std::ostream& out, std::ostream& err) {
  if (!options.join_secret_file.empty()) {
    err << "gleaner: agents no longer hold the cluster's secret: keep it on the coordinators "
           "only; on a coordinator host, root runs `gleaner agent-token create --host NAME`, "
           "and the agent joins with --join-token-file\n";
    return kExitUsage;
  }
  const std::string name = options.name.empty() ? core::Hostname() : options.name;
  if (auto s = cluster::CheckAgentName(name); !s.ok()) {
    err << "gleaner: --name: " << s.message() << "\n";
    return kExitUsage;
  }
  if (!options.rack.empty()) {
    if (auto s = cluster::CheckAgentName(options.rack); !s.ok()) {
      err << "gleaner: --rack: only letters, digits, '-', '_' and '.', 1 to 128 of them\n";
      return kExitUsage;
    }
  }
  auto endpoints = daemon::ParseCoordinatorUrls(options.servers, options.tls);
  if (!endpoints.ok()) {
    err << "gleaner: " << endpoints.status().message() << "\n";
    return kExitUsage;
  }
  daemon::AgentDaemonOptions agent;
  agent.name = name;
  agent.rack = options.rack;
  agent.coordinators = std::move(endpoints).value();
  agent.servers = options.servers;
  agent.join_token_file = options.join_token_file;
  agent.for_s = options.for_s;
  if (options.metrics_listen != "none") {
    auto host_port = net::ParseHostPort(options.metrics_listen);
    if (!host_port.ok()) {
      err << "gleaner: --metrics-listen: " << host_port.status().message() << "\n";
      return kExitUsage;
    }
    agent.metrics_listen = *host_port;
  }
  int start_rc = kExitOk;
  std::optional<daemon::DaemonBase> base =
      StartDaemon(options.data_dir, options.config, options.interval_s, err, &start_rc);
  if (!base) return start_rc;
  GpuSource source;
  // Simulated GPUs are this agent's own: several agents may play one scenario.
  if (int rc =
          OpenGpuSource(options.fake, options.nvml_library, clock, inspector, err, &source, name);
      rc != kExitOk) {
    return rc;
  }
  const core::Status ran = daemon::RunAgentDaemon(agent, *base, std::move(source), clock, out);
  if (!ran.ok()) {
    err << "gleaner: " << ran.message() << "\n";
    return ran.code() == core::StatusCode::kUnavailable ? kExitFailure : kExitBadInput;
  }
  return kExitOk;
}

}  // namespace gleaner::cli
