#include "cli/daemon_support.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "cli/exit_codes.h"
#include "config/data_dir.h"
#include "config/trusted_paths.h"
#include "daemon/daemon_start.h"

namespace gleaner::cli {

void AddServerTlsOptions(CLI::App& cmd, net::TlsFiles& tls) {
  cmd.add_option("--tls-cert", tls.cert,
                 "Serve the TCP API over TLS with this PEM certificate (chain)")
      ->group("TLS");
  cmd.add_option("--tls-key", tls.key, "The PEM private key of --tls-cert")->group("TLS");
  cmd.add_option("--ca-file", tls.ca, "Check client certificates against these PEM CAs")
      ->group("TLS");
  cmd.add_flag("--require-client-cert", tls.require_client_cert,
               "Refuse clients without a certificate signed by --ca-file (mTLS)")
      ->group("TLS");
}

void AddClientTlsOptions(CLI::App& cmd, net::TlsFiles& tls, bool env) {
  CLI::Option* ca = cmd.add_option(
      "--ca-file", tls.ca, "For https:// servers: trust these PEM CAs (default: the system's)");
  CLI::Option* cert = cmd.add_option("--tls-cert", tls.cert,
                                     "For https:// servers: present this PEM client certificate");
  CLI::Option* key = cmd.add_option("--tls-key", tls.key, "The PEM private key of --tls-cert");
  for (CLI::Option* o : {ca, cert, key}) o->group("TLS");
  if (env) {
    ca->envname("GLEANER_CA_FILE");
    cert->envname("GLEANER_TLS_CERT");
    key->envname("GLEANER_TLS_KEY");
  }
}

std::optional<daemon::DaemonBase> StartDaemon(const std::string& data_dir_flag,
                                              const std::string& config_flag,
                                              std::optional<double> interval_s, std::ostream& err,
                                              int* exit_code) {
  daemon::RaiseFileLimit();
  daemon::DaemonBase base;
  // First, while the daemon has one thread: it takes the variables out of
  // the environment.
  base.notifier = core::ServiceNotifier::FromEnvironment();
  base.data_dir = config::DataDir(data_dir_flag);
  base.config_path = config::ConfigPath(base.data_dir, config_flag);
  // Its rules say who may do what as root: only those who could be root
  // anyway may write them. Read from where it was checked, never again
  // through a link.
  auto trusted = config::TrustedConfigPath(base.config_path);
  if (!trusted.ok()) {
    err << "gleaner: " << trusted.status().message() << "\n";
    *exit_code = kExitFailure;
    return std::nullopt;
  }
  base.config_path = std::move(trusted).value();
  auto config = daemon::LoadDaemonConfig(base.config_path, !config_flag.empty(), interval_s,
                                         &base.config_text);
  if (!config.ok()) {
    err << "gleaner: " << config.status().message() << "\n";
    *exit_code = kExitBadInput;
    return std::nullopt;
  }
  base.config = std::move(config).value();
  if (auto s = config::PrepareDataDir(base.data_dir); !s.ok()) {
    err << "gleaner: " << s.message() << "\n";
    *exit_code = kExitFailure;
    return std::nullopt;
  }
  return base;
}

}  // namespace gleaner::cli
