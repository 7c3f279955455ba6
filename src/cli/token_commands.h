#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/api_client.h"

namespace gleaner::cli {

// `gleaner token create|list|revoke`: bearer tokens for reaching the API
// over TCP (`--server URL --token T`). Created through the local Unix
// socket, where the kernel vouches for the caller.
struct TokenOptions {
  ApiTarget api;
  bool json = false;
  std::string name;                   // create
  std::string user;                   // create, as root: for this user
  std::vector<std::string> scopes;    // create: what it may do (none given: all)
  std::vector<std::string> projects;  // create: the only projects it acts for
  int64_t id = 0;                     // revoke
  // agent-token create
  std::string host;
  bool replace = false;
  int64_t hours = 24;
};

struct TokenCommands {
  CLI::App* create;
  CLI::App* list;
  CLI::App* revoke;
  CLI::App* agent_create;  // agent-token create
  CLI::App* host_forget;   // host forget
  CLI::App* host_accept;   // host accept
};

TokenCommands AddTokenCommands(CLI::App& app, TokenOptions& options);
int RunTokenCreate(const TokenOptions& options, std::ostream& out, std::ostream& err);
int RunTokenList(const TokenOptions& options, std::ostream& out, std::ostream& err);
int RunTokenRevoke(const TokenOptions& options, std::ostream& out, std::ostream& err);
// `gleaner agent-token create --host NAME`: a one-time token for an agent
// to join the cluster as NAME (docs/cluster.md).
int RunAgentTokenCreate(const TokenOptions& options, std::ostream& out, std::ostream& err);
// `gleaner host forget NAME`: the coordinator forgets the GPUs host NAME
// reported, so that another host may report them; `gleaner host accept
// NAME` (`accept`): the GPUs it reported after it joined are its own
// (docs/cluster.md).
int RunHostGpus(const TokenOptions& options, bool accept, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
