#include "cli/token_commands.h"

#include <cstdio>

#include "cli/gpu_source.h"
#include "cluster/agent_credentials.h"

namespace gleaner::cli {
namespace {

using nlohmann::json;

// Reaches the API or says why not.
int WithApi(const TokenOptions& o, std::ostream& err,
            const std::function<int(const net::Endpoint&)>& call) {
  auto api = RunningApi(o.api);
  if (!api.ok()) return Fail(err, api.status());
  return call(*api);
}

std::string TokenTable(const json& tokens) {
  char line[256];
  std::snprintf(line, sizeof line, "%-5s %-12s %-20s %-25s %-25s %-25s %s", "ID", "USER", "NAME",
                "CREATED", "EXPIRES", "REVOKED", "SCOPES");
  std::string out = line;
  const auto text = [](const json& t, const char* key) {
    return t.contains(key) && t[key].is_string() ? t[key].get<std::string>() : std::string("-");
  };
  const auto joined = [](const json& t, const char* key) {
    std::string list;
    if (t.contains(key) && t[key].is_array()) {
      for (const json& s : t[key]) list += (list.empty() ? "" : ",") + s.get<std::string>();
    }
    return list;
  };
  for (const json& t : tokens) {
    std::string scopes = joined(t, "scopes");
    if (const std::string projects = joined(t, "projects"); !projects.empty()) {
      scopes += " (projects " + projects + ")";
    }
    std::snprintf(line, sizeof line, "\n%-5lld %-12.12s %-20.20s %-25s %-25s %-25s %s",
                  static_cast<long long>(t["id"].get<int64_t>()),
                  t["user"].get<std::string>().c_str(), t["name"].get<std::string>().c_str(),
                  text(t, "created_at").c_str(), text(t, "expires_at").c_str(),
                  text(t, "revoked_at").c_str(), scopes.c_str());
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
  c.create
      ->add_option("--scope", o.scopes,
                   "What it may do: read, submit, approve, admin (repeat or comma-separate; "
                   "default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"read", "submit", "approve", "admin"}));
  c.create
      ->add_option("--project", o.projects,
                   "The only projects it may submit to and approve for (repeat or "
                   "comma-separate; default: any)")
      ->delimiter(',');
  c.list = token->add_subcommand("list", "Your tokens (all, as root); never their secrets");
  c.revoke = token->add_subcommand("revoke", "Stop a token from working");
  c.revoke->add_option("id", o.id, "Token id (from token list)")->required();
  CLI::App* agent_token = app.add_subcommand(
      "agent-token", "One-time tokens for GPU hosts to join a cluster (docs/cluster.md)");
  agent_token->require_subcommand(1);
  c.agent_create = agent_token->add_subcommand(
      "create", "A token for one agent to join as --host, once (root, on a coordinator host)");
  c.agent_create->add_option("--host", o.host, "The host name the agent joins as")->required();
  c.agent_create->add_flag("--replace", o.replace,
                           "Let it take the place of a host of that name that has joined "
                           "(that agent's credential stops working)");
  c.agent_create->add_option("--hours", o.hours, "How long the token can be used")
      ->capture_default_str()
      ->check(CLI::Range(1, 720));
  CLI::App* host = app.add_subcommand("host", "A cluster's hosts (docs/cluster.md)");
  host->require_subcommand(1);
  c.host_forget = host->add_subcommand(
      "forget",
      "Release the GPUs a host reported, so that another host may report them (a GPU moved, a "
      "host renamed; root, on a coordinator)");
  c.host_forget->add_option("name", o.host, "The host, as it joined")->required();
  c.host_accept = host->add_subcommand(
      "accept",
      "Accept the GPUs a host reported after it joined (a GPU added or replaced), which are "
      "refused until then (root, on a coordinator)");
  c.host_accept->add_option("name", o.host, "The host, as it joined")->required();
  for (CLI::App* cmd : {c.create, c.list, c.revoke, c.agent_create, c.host_forget, c.host_accept}) {
    cmd->add_flag("--json", o.json, "JSON output");
    cmd->add_option("--data-dir", o.api.data_dir, "Where `gleaner up` keeps its state");
  }
  return c;
}

int RunTokenCreate(const TokenOptions& o, std::ostream& out, std::ostream& err) {
  json body = json::object();
  if (!o.name.empty()) body["name"] = o.name;
  if (!o.user.empty()) body["user"] = o.user;
  if (!o.scopes.empty()) body["scopes"] = o.scopes;
  if (!o.projects.empty()) body["projects"] = o.projects;
  return WithApi(o, err, [&](const net::Endpoint& api) {
    return CallApi(
        api, o.api.token, "POST", "/v1/tokens", body.dump(), o.json,
        [](const json& t) {
          std::string scopes;
          for (const json& s : t.value("scopes", json::array())) {
            if (s.is_string()) scopes += (scopes.empty() ? "" : ", ") + s.get<std::string>();
          }
          return "token " + std::to_string(t["id"].get<int64_t>()) + " for " +
                 t["user"].get<std::string>() + (scopes.empty() ? "" : " (may " + scopes + ")") +
                 ", shown only now; keep it secret:\n" + t["token"].get<std::string>();
        },
        out, err);
  });
}

int RunTokenList(const TokenOptions& o, std::ostream& out, std::ostream& err) {
  return WithApi(o, err, [&](const net::Endpoint& api) {
    return CallApi(
        api, o.api.token, "GET", "/v1/tokens", "", o.json,
        [](const json& doc) { return TokenTable(doc["tokens"]); }, out, err);
  });
}

int RunTokenRevoke(const TokenOptions& o, std::ostream& out, std::ostream& err) {
  return WithApi(o, err, [&](const net::Endpoint& api) {
    return CallApi(
        api, o.api.token, "POST", "/v1/tokens/" + std::to_string(o.id) + "/revoke", "", o.json,
        [&](const json&) { return "revoked token " + std::to_string(o.id); }, out, err);
  });
}

int RunHostGpus(const TokenOptions& o, bool accept, std::ostream& out, std::ostream& err) {
  if (auto s = cluster::CheckAgentName(o.host); !s.ok()) return Fail(err, s);
  return WithApi(o, err, [&](const net::Endpoint& api) {
    return CallApi(
        api, o.api.token, "POST", "/v1/hosts/" + o.host + (accept ? "/accept" : "/forget"), "",
        o.json,
        [&](const json& j) {
          const std::string gpus = std::to_string(j["gpus"].get<int64_t>()) + " GPU(s)";
          return accept ? "accepted " + gpus + " new on host " + o.host
                        : "forgot host " + o.host + ": its " + gpus +
                              " may now be reported by another host";
        },
        out, err);
  });
}

int RunAgentTokenCreate(const TokenOptions& o, std::ostream& out, std::ostream& err) {
  const json body = {{"host", o.host}, {"replace", o.replace}, {"hours", o.hours}};
  return WithApi(o, err, [&](const net::Endpoint& api) {
    return CallApi(
        api, o.api.token, "POST", "/v1/agent-tokens", body.dump(), o.json,
        [](const json& t) {
          const std::string host = t["host"].get<std::string>();
          return "join token for host " + host + ", good once until " +
                 t["expires_at"].get<std::string>() + " (shown only now; keep it secret):\n" +
                 t["token"].get<std::string>() + "\non " + host +
                 ", put it in a file only root can read (chmod 600) and run\n  gleaner agent "
                 "--server URL --name " +
                 host + " --join-token-file FILE";
        },
        out, err);
  });
}

}  // namespace gleaner::cli
