#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "cli/api_client.h"

namespace gleaner::cli {

// `gleaner token create|list|revoke`: bearer tokens for reaching the API
// over TCP (`--server URL --token T`). Created through the local Unix
// socket, where the kernel vouches for the caller.
struct TokenOptions {
  ApiTarget api;
  bool json = false;
  std::string name;  // create
  std::string user;  // create, as root: for this user
  int64_t id = 0;    // revoke
};

struct TokenCommands {
  CLI::App* create;
  CLI::App* list;
  CLI::App* revoke;
};

TokenCommands AddTokenCommands(CLI::App& app, TokenOptions& options);
int RunTokenCreate(const TokenOptions& options, std::ostream& out, std::ostream& err);
int RunTokenList(const TokenOptions& options, std::ostream& out, std::ostream& err);
int RunTokenRevoke(const TokenOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
