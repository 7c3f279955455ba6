#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

// How agents prove who they are. The operator gives every coordinator and
// every new agent the cluster's join secret. An agent joins once with it and
// gets a credential of its own, "agent.NAME.HMAC-SHA256(secret, \"gleaner-agent:\" + NAME)", which
// it keeps in its data directory (mode 0600) and sends as a bearer token.
// Any coordinator sharing the secret recomputes it, so nothing per agent is
// stored and a standby recognises every agent at once. A credential speaks
// for one host only: it cannot report for another. Rotating the secret
// revokes every credential; agents then join again with the new one.
namespace gleaner::cluster {

// Names are host names: letters, digits, '-', '_' and '.', 1 to 128 of them.
core::Status CheckAgentName(std::string_view name);

// The secret must be long enough not to be guessed: 32 characters or more.
core::Status CheckJoinSecret(std::string_view secret);

std::string AgentCredential(std::string_view join_secret, std::string_view agent_name);

// The agent a credential names; kUnauthenticated when it is not one this
// secret issued.
core::Result<std::string> AgentOfCredential(std::string_view join_secret,
                                            std::string_view credential);

}  // namespace gleaner::cluster
