#include "cluster/agent_credentials.h"

#include "core/sha256.h"

namespace gleaner::cluster {

namespace {
constexpr std::string_view kPrefix = "agent.";
}  // namespace

core::Status CheckAgentName(std::string_view name) {
  if (name.empty() || name.size() > 128) {
    return core::InvalidArgument("agent name: 1 to 128 characters; got " +
                                 std::to_string(name.size()));
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) {
      return core::InvalidArgument("agent name \"" + std::string(name) +
                                   "\": only letters, digits, '-', '_' and '.' (a host name)");
    }
  }
  return core::Status::Ok();
}

core::Status CheckJoinSecret(std::string_view secret) {
  if (secret.size() < 32) {
    return core::InvalidArgument("the join secret has " + std::to_string(secret.size()) +
                                 " characters; use 32 or more (`openssl rand -hex 32` makes one)");
  }
  return core::Status::Ok();
}

std::string AgentCredential(std::string_view join_secret, std::string_view agent_name) {
  return std::string(kPrefix) + std::string(agent_name) + "." +
         core::HmacSha256Hex(join_secret, "gleaner-agent:" + std::string(agent_name));
}

core::Result<std::string> AgentOfCredential(std::string_view join_secret,
                                            std::string_view credential) {
  const size_t dot = credential.rfind('.');
  if (!credential.starts_with(kPrefix) || dot == std::string_view::npos || dot < kPrefix.size()) {
    return core::Unauthenticated("not an agent credential (agent.NAME.DIGEST)");
  }
  const std::string name(credential.substr(kPrefix.size(), dot - kPrefix.size()));
  if (!CheckAgentName(name).ok() ||
      !core::ConstantTimeEquals(credential, AgentCredential(join_secret, name))) {
    return core::Unauthenticated(
        "agent credential not issued with this cluster's join secret: join again");
  }
  return name;
}

}  // namespace gleaner::cluster
