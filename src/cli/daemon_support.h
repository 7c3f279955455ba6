#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "daemon/daemon_start.h"
#include "net/tls.h"

namespace CLI {
class App;
}

// The flags and the start-up every long-running command (`gleaner up`,
// `server`, `agent`) shares; what they start is in daemon/.
namespace gleaner::cli {

// A daemon's TCP API over TLS: --tls-cert, --tls-key, and --ca-file with
// --require-client-cert for client certificates (mTLS).
void AddServerTlsOptions(CLI::App& cmd, net::TlsFiles& tls);

// A client's: --ca-file (whom to trust) and --tls-cert, --tls-key (a
// certificate to present). `env`: also read from $GLEANER_CA_FILE,
// $GLEANER_TLS_CERT and $GLEANER_TLS_KEY.
void AddClientTlsOptions(CLI::App& cmd, net::TlsFiles& tls, bool env);

// The one start-up path of `up`, `monitor`, `agent` and `server`: raises
// the file limit, reads the config (`interval_s` laid over it) and prepares
// the data directory. On failure it says why on `err` and returns nullopt
// with `*exit_code` set: kExitBadInput for the config, kExitFailure for the
// directory.
std::optional<daemon::DaemonBase> StartDaemon(const std::string& data_dir_flag,
                                              const std::string& config_flag,
                                              std::optional<double> interval_s, std::ostream& err,
                                              int* exit_code);

}  // namespace gleaner::cli
