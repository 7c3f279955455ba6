#include "server/agent_api.h"

#include <optional>

#include "cluster/agent_credentials.h"
#include "core/json_depth.h"
#include "core/sha256.h"
#include "server/routing.h"

namespace gleaner::server {

using nlohmann::json;

HttpResponse AgentApi::Handle(const HttpRequest& request) {
  if (request.method != "POST") return WrongMethod(request);
  if (request.path == "/v1/agents/join") return Join(request);
  if (request.path == "/v1/agents/report") return Report(request);
  if (request.path == "/v1/agents/wait") return Wait(request);
  return NoSuchEndpoint(request);
}

HttpResponse AgentApi::Join(const HttpRequest& request) {
  const json body = core::ParseUntrustedJson<json>(request.body);
  if (body.is_object() && body.contains("join_secret")) {
    return ErrorResponse(core::InvalidArgument(
        "agents no longer join with the cluster's secret: an admin runs `gleaner agent-token "
        "create --host NAME` on a coordinator, and the agent joins with --join-token-file"));
  }
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string() ||
      !body.contains("join_token") || !body["join_token"].is_string()) {
    return ErrorResponse(core::InvalidArgument(
        "a join is {\"name\": HOST, \"join_token\": TOKEN} (gleaner agent --join-token-file)"));
  }
  const std::string name = body["name"];
  if (auto s = cluster::CheckAgentName(name); !s.ok()) return ErrorResponse(s);
  const std::string digest = core::Sha256Hex(body["join_token"].get<std::string>());
  auto generation = [&] {
    core::MutexLock lock(store_mu_);
    return joins_.SpendJoinToken(digest, name, clock_.Now());
  }();
  if (!generation.ok()) {
    refusals_.Note("join", "refused a join as " + name + ": " + generation.status().message());
    return ErrorResponse(generation.status());
  }
  Remember(name, *generation);
  log_("agent " + name + " joined (generation " + std::to_string(*generation) + ")");
  return Json(
      200, {{"name", name}, {"credential", cluster::AgentCredential(secret_, name, *generation)}});
}

core::Result<std::string> AgentApi::Authenticate(const std::string& credential) {
  GLEANER_ASSIGN_OR_RETURN(cluster::AgentIdentity who,
                           cluster::AgentOfCredential(secret_, credential));
  const auto known = [&]() -> std::optional<int64_t> {
    core::MutexLock lock(generations_mu_);
    // A credential newer than what this coordinator knows was issued by
    // another one: read again rather than refuse it.
    const auto at = generations_.find(who.name);
    if (std::chrono::steady_clock::now() - generations_read_ > kGenerationTtl ||
        at == generations_.end() || who.generation > at->second) {
      return std::nullopt;
    }
    return at->second;
  };
  std::optional<int64_t> latest = known();
  if (!latest) {
    core::MutexLock lock(store_mu_);
    latest = known();  // another report may have read them meanwhile
    if (!latest && std::chrono::steady_clock::now() - generations_read_ > kGenerationTtl) {
      // Every host's at once: one read per kGenerationTtl, however many
      // hosts report, instead of one per host.
      const auto read_at = std::chrono::steady_clock::now();
      GLEANER_ASSIGN_OR_RETURN(auto all, joins_.AgentGenerations());
      core::MutexLock held(generations_mu_);
      generations_ = std::move(all);
      generations_read_ = read_at;
    }
    if (!latest) latest = known();
    if (!latest) {
      GLEANER_ASSIGN_OR_RETURN(latest, joins_.AgentGeneration(who.name));
      Remember(who.name, *latest);
    }
  }
  if (who.generation != *latest) {
    return core::Unauthenticated("this credential of " + who.name +
                                 " was replaced by a later join of that host; ask an admin for "
                                 "a join token (gleaner agent-token create --host " +
                                 who.name + " --replace) and join again");
  }
  return who.name;
}

void AgentApi::Remember(const std::string& host, int64_t generation) {
  core::MutexLock lock(generations_mu_);
  generations_[host] = generation;
}

core::Result<std::string> AgentApi::Caller(const HttpRequest& request) {
  const auto header = request.headers.find("authorization");
  if (header == request.headers.end() || header->second.rfind("Bearer ", 0) != 0) {
    return core::Unauthenticated(
        "an agent needs \"Authorization: Bearer <credential>\" from /v1/agents/join");
  }
  return Authenticate(header->second.substr(7));
}

HttpResponse AgentApi::Wait(const HttpRequest& request) {
  auto agent = Caller(request);
  if (!agent.ok()) {
    refusals_.Note("report", "refused an agent: " + agent.status().message());
    return ErrorResponse(agent.status());
  }
  const json body = core::ParseUntrustedJson<json>(request.body);
  if (!body.is_object() || !body.contains("orders") || !body["orders"].is_number_unsigned()) {
    return ErrorResponse(
        core::InvalidArgument("a wait is {\"orders\": N}, N from the last reply to a report"));
  }
  const std::shared_ptr<cluster::Coordinator> leader = leader_();
  if (leader == nullptr) {
    return ErrorResponse(
        core::Unavailable("this coordinator stands by and takes no reports; the leading one does"));
  }
  const uint64_t seen = body["orders"].get<uint64_t>();
  HttpResponse timeout = Json(200, {{"orders", seen}});
  timeout.later = std::make_shared<LaterResponse>(LaterResponse{
      kWaitLimit, [leader, agent = *agent, seen](std::function<void(HttpResponse)> answer) {
        leader->WaitForOrders(agent, seen, [answer = std::move(answer)](uint64_t orders) {
          answer(Json(200, {{"orders", orders}}));
        });
      }});
  return timeout;
}

HttpResponse AgentApi::Report(const HttpRequest& request) {
  auto agent = Caller(request);
  if (!agent.ok()) {
    refusals_.Note("report", "refused an agent's report: " + agent.status().message());
    return ErrorResponse(agent.status());
  }
  const std::shared_ptr<cluster::Coordinator> leader = leader_();
  if (leader == nullptr) {
    return ErrorResponse(
        core::Unavailable("this coordinator stands by and takes no reports; the leading one does"));
  }
  const json body = core::ParseUntrustedJson<json>(request.body);
  if (body.is_discarded()) return ErrorResponse(core::InvalidArgument("the report is not JSON"));
  auto report = cluster::ReportFromJson(body);
  if (!report.ok()) return ErrorResponse(report.status());
  auto reply = leader->HandleReport(*agent, *report, log_);
  if (!reply.ok()) {
    refusals_.Note("report",
                   "refused the report of agent " + *agent + ": " + reply.status().message());
    return ErrorResponse(reply.status());
  }
  return Json(200, cluster::ReplyToJson(*reply));
}

}  // namespace gleaner::server
