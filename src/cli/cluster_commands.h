#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <optional>
#include <string>

#include "agent/process_info.h"
#include "core/clock.h"
#include "net/tls.h"

// `gleaner server` (a coordinator) and `gleaner agent` (one per GPU host):
// gleaner across many hosts (docs/cluster.md).
namespace gleaner::cli {

struct ServerOptions {
  std::string data_dir;
  std::string config;
  std::string store;       // a PostgreSQL URI, or a SQLite file (default DATA_DIR/gleaner.db)
  std::string store_file;  // a file holding `store` (for URIs with a password)
  std::string listen = "127.0.0.1:7380";
  std::string join_secret_file;
  net::TlsFiles tls;  // the TCP API and agents' reports over TLS
  double silent_after_s = 10;
  double requeue_after_s = 300;
  int max_gpus_per_host = 16;  // an agent reporting more is refused
  std::optional<double> for_s;
};

struct AgentOptions {
  std::string servers;  // comma-separated coordinator URLs
  std::string join_token_file;
  std::string join_secret_file;  // refused: agents join with tokens
  std::string name;              // default: the host name
  std::string rack;              // for gangs over several nodes; empty: none
  std::string data_dir;
  std::string config;
  std::string fake;
  std::string nvml_library = "libnvidia-ml.so.1";
  std::optional<double> interval_s;
  std::optional<double> for_s;
  std::string metrics_listen = "none";  // HOST:PORT for Prometheus
  net::TlsFiles tls;  // for https:// coordinators: whom to trust, and a client certificate
};

CLI::App* AddServerCommand(CLI::App& app, ServerOptions& options);
CLI::App* AddAgentCommand(CLI::App& app, AgentOptions& options);

int RunServer(const ServerOptions& options, const core::Clock& clock, std::ostream& out,
              std::ostream& err);
int RunAgent(const AgentOptions& options, const core::Clock& clock,
             const agent::ProcessInspector& inspector, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
