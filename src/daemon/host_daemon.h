#pragma once

// `gleaner up` and `gleaner monitor`: one host that judges its own GPUs,
// keeps their history and fires alerts; `up` also serves the API and,
// unless told to only watch, runs queued jobs on its idle GPUs.

#include <optional>
#include <ostream>
#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "daemon/daemon_start.h"
#include "daemon/gpu_source.h"
#include "net/tls.h"

namespace gleaner::daemon {

struct HostDaemonOptions {
  bool up = false;       // serve the API (DATA_DIR/gleaner.sock and `listen`)
  bool harvest = false;  // run queued jobs on idle GPUs
  bool shadow = false;   // place them as harvest would, start none
  // Where the HTTP API listens for token holders; "none": only the Unix
  // socket. A default address that is taken is skipped with a warning;
  // one given explicitly (`listen_given`) must be served.
  std::string listen;
  bool listen_given = false;
  net::TlsFiles tls;            // the TCP API over TLS
  std::optional<double> for_s;  // stop after this long; nullopt: at a signal
  // The data dir's history came from the other kind of GPU source (real
  // or simulated): write this one's there anyway.
  bool accept_gpu_source = false;
};

// Samples, judges, stores and alerts (and, as asked, serves and lends)
// until SIGINT or SIGTERM (or `for_s`), logging to `out`; SIGHUP reads the
// config again (`up`: as a policy version, DaemonPolicy; `monitor`: its
// idle rules, ConfigReload). An error says why it could not start or
// run: kUnavailable where the store, a port or the GPUs are not to be had,
// another code where its configuration is wrong.
core::Status RunHostDaemon(const HostDaemonOptions& options, DaemonBase& base, GpuSource source,
                           const core::Clock& clock, std::ostream& out);

}  // namespace gleaner::daemon
