#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

// How agents prove who they are. Only the coordinators hold the cluster's
// secret. An admin issues a one-time join token for a host (gleaner
// agent-token create --host NAME); the agent there spends it once and gets
// a credential of its own,
//   "agent.NAME.GEN.HMAC-SHA256(secret, \"gleaner-agent:NAME:GEN\")",
// which it keeps in its data directory (mode 0600) and sends as a bearer
// token. GEN is the host's generation: how many times it has joined. A
// credential speaks for its one host, and only while its generation is the
// host's latest, so a new join (an admin's --replace) cuts off the one
// before it; rotating the secret cuts off every credential. Any
// coordinator sharing the secret and the store recognises every agent.
namespace gleaner::cluster {

// Names are host names: letters, digits, '-', '_' and '.', 1 to 128 of them.
core::Status CheckAgentName(std::string_view name);

// The secret must be long enough not to be guessed: 32 characters or more.
core::Status CheckJoinSecret(std::string_view secret);

std::string AgentCredential(std::string_view secret, std::string_view agent_name,
                            int64_t generation);

struct AgentIdentity {
  std::string name;
  // 0: a credential from before join tokens ("agent.NAME.DIGEST"), good
  // only while the host has never joined with a token.
  int64_t generation = 0;
};

// The agent a credential names; kUnauthenticated when it is not one this
// secret issued.
core::Result<AgentIdentity> AgentOfCredential(std::string_view secret, std::string_view credential);

}  // namespace gleaner::cluster
