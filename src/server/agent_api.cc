#include "server/agent_api.h"

#include "core/json_depth.h"
#include "cluster/agent_credentials.h"
#include "core/sha256.h"
#include "server/routing.h"

namespace gleaner::server {

using nlohmann::json;

HttpResponse AgentApi::Handle(const HttpRequest& request) {
  if (request.method != "POST") return WrongMethod(request);
  if (request.path == "/v1/agents/join") return Join(request);
  if (request.path == "/v1/agents/report") return Report(request);
  return NoSuchEndpoint(request);
}

HttpResponse AgentApi::Join(const HttpRequest& request) {
  const json body = core::ParseUntrustedJson<json>(request.body);
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string() ||
      !body.contains("join_secret") || !body["join_secret"].is_string()) {
    return ErrorResponse(core::InvalidArgument(
        "a join is {\"name\": HOST, \"join_secret\": SECRET} (gleaner agent --join-secret-file)"));
  }
  const std::string name = body["name"];
  if (auto s = cluster::CheckAgentName(name); !s.ok()) return ErrorResponse(s);
  if (!core::ConstantTimeEquals(body["join_secret"].get<std::string>(), join_secret_)) {
    log_("refused a join as " + name + ": wrong join secret");
    return ErrorResponse(core::Unauthenticated(
        "wrong join secret: use the one in the coordinators' --join-secret-file"));
  }
  log_("agent " + name + " joined");
  return Json(200, {{"name", name}, {"credential", cluster::AgentCredential(join_secret_, name)}});
}

HttpResponse AgentApi::Report(const HttpRequest& request) {
  const auto header = request.headers.find("authorization");
  if (header == request.headers.end() || header->second.rfind("Bearer ", 0) != 0) {
    return ErrorResponse(core::Unauthenticated(
        "an agent report needs \"Authorization: Bearer <credential>\" from /v1/agents/join"));
  }
  auto agent = cluster::AgentOfCredential(join_secret_, header->second.substr(7));
  if (!agent.ok()) return ErrorResponse(agent.status());
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
  if (!reply.ok()) return ErrorResponse(reply.status());
  return Json(200, cluster::ReplyToJson(*reply));
}

}  // namespace gleaner::server
