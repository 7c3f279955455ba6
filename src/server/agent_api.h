#pragma once

#include <functional>
#include <memory>
#include <string>

#include "cluster/coordinator.h"
#include "server/http_message.h"

namespace gleaner::server {

// The routes agents use (docs/cluster.md):
//   POST /v1/agents/join    {"name", "join_secret"} -> {"name", "credential"}
//   POST /v1/agents/report  the agent protocol, with "Authorization: Bearer
//                           <credential>"; the credential names the host.
// Only the leading coordinator takes reports; a standby answers 503 and
// the agent tries the next server it knows. Thread-safe.
class AgentApi {
 public:
  // The coordinator while this server leads; null while it stands by.
  using Leader = std::function<std::shared_ptr<cluster::Coordinator>()>;

  AgentApi(std::string join_secret, Leader leader, cluster::Log log)
      : join_secret_(std::move(join_secret)), leader_(std::move(leader)), log_(std::move(log)) {}

  static bool Owns(const HttpRequest& request) { return request.path.rfind("/v1/agents/", 0) == 0; }
  HttpResponse Handle(const HttpRequest& request);

 private:
  HttpResponse Join(const HttpRequest& request);
  HttpResponse Report(const HttpRequest& request);

  std::string join_secret_;
  Leader leader_;
  cluster::Log log_;
};

}  // namespace gleaner::server
