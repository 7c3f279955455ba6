#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cluster/coordinator.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "server/http_message.h"
#include "server/refusal_log.h"
#include "store/token_store.h"

namespace gleaner::server {

// The routes agents use (docs/cluster.md):
//   POST /v1/agents/join    {"name", "join_token"} -> {"name", "credential"}: spends a
//                           one-time token an admin issued for that host
//   POST /v1/agents/report  the agent protocol, with "Authorization: Bearer
//                           <credential>"; the credential names the host.
//   POST /v1/agents/wait    {"orders": N}, with the credential -> {"orders": M}: a
//                           long poll, answered once the coordinator has orders
//                           for the host past N (a start, a preemption, a
//                           cancel), or after 25 s with M = N; the agent then
//                           reports at once.
// Only the leading coordinator takes reports; a standby answers 503 and
// the agent tries the next server it knows. Thread-safe.
class AgentApi {
 public:
  // The coordinator while this server leads; null while it stands by.
  using Leader = std::function<std::shared_ptr<cluster::Coordinator>()>;

  // `secret` signs credentials; `joins` (a connection of its own, used only
  // here) holds join tokens and each host's generation.
  AgentApi(std::string secret, store::TokenStore& joins, const core::Clock& clock, Leader leader,
           cluster::Log log)
      : secret_(std::move(secret)),
        joins_(joins),
        clock_(clock),
        leader_(std::move(leader)),
        log_(log),
        refusals_(clock, std::move(log)) {}

  static bool Owns(const HttpRequest& request) { return request.path.rfind("/v1/agents/", 0) == 0; }
  HttpResponse Handle(const HttpRequest& request);

 private:
  HttpResponse Join(const HttpRequest& request);
  HttpResponse Report(const HttpRequest& request);
  HttpResponse Wait(const HttpRequest& request);
  // The host whose credential the request carries.
  core::Result<std::string> Caller(const HttpRequest& request);
  // The host a report's credential speaks for, while its generation is
  // the host's latest.
  core::Result<std::string> Authenticate(const std::string& credential);
  // Notes `host`'s generation as read (or made) just now.
  void Remember(const std::string& host, int64_t generation) GLEANER_EXCLUDES(generations_mu_);

  std::string secret_;
  store::TokenStore& joins_ GLEANER_GUARDED_BY(store_mu_);
  const core::Clock& clock_;
  Leader leader_;
  cluster::Log log_;
  RefusalLog refusals_;  // refused joins and reports, without a flood
  // Each host's generation as last read: all are read again at most
  // kGenerationTtl after the last such read, so a join through another
  // coordinator is seen within it.
  static constexpr std::chrono::seconds kGenerationTtl{5};
  // How long a wait is held: under the agents' 35 s client timeout, and
  // within what proxies and NATs keep open.
  static constexpr core::Duration kWaitLimit = core::Seconds(25);
  // Two locks, so that a report whose host is cached never waits for a
  // join's transaction (joins come from anyone who can reach the port).
  core::Mutex store_mu_;
  core::Mutex generations_mu_;
  std::map<std::string, int64_t> generations_ GLEANER_GUARDED_BY(generations_mu_);
  // Written under both locks, so read under either: not annotated, since
  // GLEANER_GUARDED_BY names one lock.
  std::chrono::steady_clock::time_point generations_read_{};  // never yet: the epoch
};

}  // namespace gleaner::server
