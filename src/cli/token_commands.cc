#include "cli/token_commands.h"

#include <cstdio>

#include "cli/gpu_source.h"

namespace gleaner::cli {
namespace {

using nlohmann::json;

// Reaches the API or says why not.
int WithApi(const TokenOptions& o, std::ostream& err,
            const std::function<int(const server::Endpoint&)>& call) {
  auto api = FindApi(o.api);
  if (!api.ok()) return Fail(err, api.status());
  if (!*api) {
    return Fail(err,
                core::Unavailable("gleaner up is not running here (no " + DataDir(o.api.data_dir) +
                                  "/gleaner.sock); pass --data-dir or --server"));
  }
  return call(**api);
}

std::string TokenTable(const json& tokens) {
  char line[256];
  std::snprintf(line, sizeof line, "%-5s %-12s %-20s %-25s %-25s %s", "ID", "USER", "NAME",
                "CREATED", "EXPIRES", "REVOKED");
  std::string out = line;
  const auto text = [](const json& t, const char* key) {
    return t.contains(key) && t[key].is_string() ? t[key].get<std::string>() : std::string("-");
  };
  for (const json& t : tokens) {
    std::snprintf(line, sizeof line, "\n%-5lld %-12.12s %-20.20s %-25s %-25s %s",
                  static_cast<long long>(t["id"].get<int64_t>()),
                  t["user"].get<std::string>().c_str(), t["name"].get<std::string>().c_str(),
                  text(t, "created_at").c_str(), text(t, "expires_at").c_str(),
                  text(t, "revoked_at").c_str());
    out += line;
  }
  return out;
}

}  // namespace

TokenCommands AddTokenCommands(CLI::App& app, TokenOptions& o) {
  CLI::App* token = app.add_subcommand("token", "API tokens for --server URL --token T");
  token->require_subcommand(1);
  TokenCommands c{};
  c.create = token->add_subcommand("create", "A new token for you (prints its secret once)");
  c.create->add_option("--name", o.name, "What it is for: laptop, ci, ...");
  c.create->add_option("--user", o.user, "As root: a token for this user");
  c.list = token->add_subcommand("list", "Your tokens (all, as root); never their secrets");
  c.revoke = token->add_subcommand("revoke", "Stop a token from working");
  c.revoke->add_option("id", o.id, "Token id (from token list)")->required();
  for (CLI::App* cmd : {c.create, c.list, c.revoke}) {
    cmd->add_flag("--json", o.json, "JSON output");
    cmd->add_option("--data-dir", o.api.data_dir, "Where `gleaner up` keeps its state");
  }
  return c;
}

int RunTokenCreate(const TokenOptions& o, std::ostream& out, std::ostream& err) {
  json body = json::object();
  if (!o.name.empty()) body["name"] = o.name;
  if (!o.user.empty()) body["user"] = o.user;
  return WithApi(o, err, [&](const server::Endpoint& api) {
    return CallApi(
        api, o.api.token, "POST", "/v1/tokens", body.dump(), o.json,
        [](const json& t) {
          return "token " + std::to_string(t["id"].get<int64_t>()) + " for " +
                 t["user"].get<std::string>() + " (shown only now; keep it secret):\n" +
                 t["token"].get<std::string>();
        },
        out, err);
  });
}

int RunTokenList(const TokenOptions& o, std::ostream& out, std::ostream& err) {
  return WithApi(o, err, [&](const server::Endpoint& api) {
    return CallApi(
        api, o.api.token, "GET", "/v1/tokens", "", o.json,
        [](const json& doc) { return TokenTable(doc["tokens"]); }, out, err);
  });
}

int RunTokenRevoke(const TokenOptions& o, std::ostream& out, std::ostream& err) {
  return WithApi(o, err, [&](const server::Endpoint& api) {
    return CallApi(
        api, o.api.token, "POST", "/v1/tokens/" + std::to_string(o.id) + "/revoke", "", o.json,
        [&](const json&) { return "revoked token " + std::to_string(o.id); }, out, err);
  });
}

}  // namespace gleaner::cli
