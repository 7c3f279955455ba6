#pragma once

// `gleaner server`: a coordinator. Every server on one store serves the
// API; the one holding the store's leader lease also schedules and takes
// the agents' reports.

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "cluster/coordinator.h"
#include "cluster/log.h"
#include "config/config_file.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "daemon/daemon_start.h"
#include "net/tls.h"
#include "store/leader_lease.h"

namespace gleaner::daemon {

// The leader lease, held or tried for at each Step, and the coordinator
// while it is held: won, this server starts leading on two store
// connections of its own; lost, it stands by and serves the API only.
class Leadership {
 public:
  Leadership(std::unique_ptr<store::LeaderLease> lease, std::string store, const core::Clock& clock,
             cluster::CoordinatorOptions options, const cluster::Log& log)
      : lease_(std::move(lease)),
        store_(std::move(store)),
        clock_(clock),
        log_(log),
        options_(std::move(options)) {}

  // Holds the lease once (every fraction of a second: a leader whose hold
  // broke must stop at once).
  void Step();
  // The coordinator while this server leads; null while it stands by.
  std::shared_ptr<cluster::Coordinator> leader() const;
  // Options for every coordinator from now on; a leading one is started
  // afresh on them at the next Step, as a new leader would be (agents'
  // next reports fill its view of the hosts again).
  void Reconfigure(cluster::CoordinatorOptions options);

 private:
  std::unique_ptr<store::LeaderLease> lease_;
  const std::string store_;
  const core::Clock& clock_;
  const cluster::Log& log_;
  bool said_standby_ = false;
  mutable core::Mutex mu_;
  cluster::CoordinatorOptions options_ GLEANER_GUARDED_BY(mu_);
  bool restart_ GLEANER_GUARDED_BY(mu_) = false;
  std::shared_ptr<cluster::Coordinator> leader_ GLEANER_GUARDED_BY(mu_);
};

struct CoordinatorDaemonOptions {
  std::string store;        // a PostgreSQL URI or a SQLite file
  std::string join_secret;  // signs the agents' credentials
  std::string listen;       // HOST:PORT, as given
  std::pair<std::string, uint16_t> listen_at;
  std::shared_ptr<const net::TlsContext> tls;  // null: plain HTTP
  cluster::CoordinatorOptions coordinator;
  std::optional<double> for_s;  // stop after this long; nullopt: at a signal
};

// `options` (what the flags set) with what the config sets: the
// scheduler's rules, projects, approvals' timeout and history's retention.
cluster::CoordinatorOptions WithConfig(cluster::CoordinatorOptions options,
                                       const config::GleanerConfig& config);

// Serves the API on DATA_DIR/gleaner.sock and `listen_at`, and leads when
// it holds the lease, until a signal (or `for_s`), logging to `out`. An
// error says why it could not start: kUnavailable where the store or a
// port is not to be had now, another code where its configuration is
// wrong.
core::Status RunCoordinatorDaemon(const CoordinatorDaemonOptions& options, DaemonBase& base,
                                  const core::Clock& clock, std::ostream& out);

}  // namespace gleaner::daemon
