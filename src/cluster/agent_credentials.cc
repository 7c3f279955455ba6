#include "cluster/agent_credentials.h"

#include <vector>

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

std::string AgentCredential(std::string_view secret, std::string_view agent_name,
                            int64_t generation) {
  const std::string name(agent_name);
  if (generation == 0) {
    return std::string(kPrefix) + name + "." + core::HmacSha256Hex(secret, "gleaner-agent:" + name);
  }
  const std::string gen = std::to_string(generation);
  return std::string(kPrefix) + name + "." + gen + "." +
         core::HmacSha256Hex(secret, "gleaner-agent:" + name + ":" + gen);
}

core::Result<AgentIdentity> AgentOfCredential(std::string_view secret,
                                              std::string_view credential) {
  const size_t dot = credential.rfind('.');
  if (!credential.starts_with(kPrefix) || dot == std::string_view::npos || dot < kPrefix.size()) {
    return core::Unauthenticated("not an agent credential (agent.NAME.GEN.DIGEST)");
  }
  // Names may hold dots, so both readings are tried: NAME.GEN, and (from
  // before join tokens) NAME alone.
  const std::string before(credential.substr(kPrefix.size(), dot - kPrefix.size()));
  std::vector<AgentIdentity> readings;
  if (const size_t gen_dot = before.rfind('.'); gen_dot != std::string::npos) {
    const std::string gen = before.substr(gen_dot + 1);
    if (!gen.empty() && gen.size() <= 18 && gen[0] != '0' &&
        gen.find_first_not_of("0123456789") == std::string::npos) {
      readings.push_back({before.substr(0, gen_dot), std::stoll(gen)});
    }
  }
  readings.push_back({before, 0});
  for (const AgentIdentity& who : readings) {
    if (CheckAgentName(who.name).ok() &&
        core::ConstantTimeEquals(credential, AgentCredential(secret, who.name, who.generation))) {
      return who;
    }
  }
  return core::Unauthenticated(
      "agent credential not issued with this cluster's secret: ask an admin for a join token "
      "(gleaner agent-token create --host NAME) and join again");
}

}  // namespace gleaner::cluster
