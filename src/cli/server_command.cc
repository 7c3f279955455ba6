// `gleaner server`: its flags, checked, and the coordinator daemon
// (daemon/coordinator_daemon.h) started with them.
#include <optional>
#include <ostream>
#include <utility>

#include "cli/cluster_commands.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "cluster/coordinator.h"
#include "config/config_file.h"
#include "daemon/coordinator_daemon.h"
#include "daemon/daemon_start.h"
#include "daemon/secrets.h"
#include "net/socket_address.h"

namespace gleaner::cli {

namespace {

core::Duration SecondsToDuration(double s) { return core::Duration(static_cast<int64_t>(s * 1e6)); }

}  // namespace

CLI::App* AddServerCommand(CLI::App& app, ServerOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "server", "Coordinate agents on many GPU hosts: one queue, one scheduler (docs/cluster.md)");
  cmd->add_option("--store", options.store,
                  "postgresql://... (for several servers), or a SQLite file "
                  "(default: DATA_DIR/gleaner.db); never with a password: see --store-file");
  cmd->add_option("--store-file", options.store_file,
                  "A file (mode 600) holding the store's URI, password included; or set "
                  "GLEANER_STORE, or keep the password in libpq's ~/.pgpass");
  cmd->add_option("--listen", options.listen, "HTTP API and agent reports: HOST:PORT")
      ->capture_default_str();
  cmd->add_option("--join-secret-file", options.join_secret_file,
                  "The cluster's secret, which signs agent credentials: the coordinators' only, "
                  "never on an agent (mode 600)")
      ->required();
  cmd->add_option("--data-dir", options.data_dir, "Where the Unix socket and a SQLite store live");
  cmd->add_option("--config", options.config, "Config file (default: DATA_DIR/gleaner.toml)");
  cmd->add_option("--silent-after", options.silent_after_s,
                  "Seconds without a report before a host's GPUs are unknown")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  cmd->add_option("--requeue-after", options.requeue_after_s,
                  "Seconds without a report before a host's jobs are requeued elsewhere (the "
                  "agents' lease)")
      ->capture_default_str()
      ->check(CLI::Range(5.0, 86400.0));
  cmd->add_option("--max-gpus-per-host", options.max_gpus_per_host,
                  "The most GPUs one host may report: an agent claiming more is refused")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--for", options.for_s, "Stop after this many seconds")
      ->check(CLI::Range(0.0, 1e9));
  AddServerTlsOptions(*cmd, options.tls);
  return cmd;
}

int RunServer(const ServerOptions& options, const core::Clock& clock, std::ostream& out,
              std::ostream& err) {
  if (options.requeue_after_s <= options.silent_after_s) {
    err << "gleaner: --requeue-after (" << options.requeue_after_s
        << " s) must be longer than --silent-after (" << options.silent_after_s << " s)\n";
    return kExitUsage;
  }
  int start_rc = kExitOk;
  std::optional<daemon::DaemonBase> base =
      StartDaemon(options.data_dir, options.config, std::nullopt, err, &start_rc);
  if (!base) return start_rc;
  auto secret = daemon::ReadJoinSecret(options.join_secret_file);
  if (!secret.ok()) {
    err << "gleaner: " << secret.status().message() << "\n";
    return kExitBadInput;
  }
  auto store_uri = daemon::StoreUri(options.store, options.store_file);
  if (!store_uri.ok()) {
    err << "gleaner: " << store_uri.status().message() << "\n";
    return kExitBadInput;
  }
  auto listen_at = net::ParseHostPort(options.listen);
  if (!listen_at.ok()) {
    err << "gleaner: --listen: " << listen_at.status().message() << "\n";
    return kExitBadInput;
  }
  auto tls = daemon::ServerTls(options.tls);
  if (!tls.ok()) {
    err << "gleaner: " << tls.status().message() << "\n";
    return kExitBadInput;
  }
  daemon::CoordinatorDaemonOptions coordinator;
  coordinator.store = store_uri->empty() ? base->data_dir + "/gleaner.db" : *store_uri;
  coordinator.join_secret = std::move(secret).value();
  coordinator.listen = options.listen;
  coordinator.listen_at = std::move(listen_at).value();
  coordinator.tls = std::move(tls).value();
  coordinator.for_s = options.for_s;
  cluster::CoordinatorOptions flags;
  flags.silent_after = SecondsToDuration(options.silent_after_s);
  flags.requeue_after = SecondsToDuration(options.requeue_after_s);
  flags.max_gpus_per_host = static_cast<size_t>(options.max_gpus_per_host);
  coordinator.coordinator = daemon::WithConfig(flags, base->config);
  const core::Status ran = daemon::RunCoordinatorDaemon(coordinator, *base, clock, out);
  if (!ran.ok()) {
    err << "gleaner: " << ran.message() << "\n";
    return ran.code() == core::StatusCode::kUnavailable ? kExitFailure : kExitBadInput;
  }
  return kExitOk;
}

}  // namespace gleaner::cli
