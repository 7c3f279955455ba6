#include "server/token_api.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cluster/agent_credentials.h"
#include "core/civil_time.h"
#include "core/format.h"
#include "core/json_depth.h"
#include "core/sha256.h"
#include "observe/verdict_json.h"
#include "server/routing.h"

namespace gleaner::server {
namespace {

using nlohmann::json;

uint8_t ScopesOf(const store::TokenRecord& t) {
  return t.scopes ? ParseScopes(*t.scopes).value_or(0) : kAllScopes;
}

json TokenToJson(const store::TokenRecord& t) {
  return {{"id", t.id},
          {"scopes", ScopeNames(ScopesOf(t))},
          {"projects", t.projects},
          {"user", t.user},
          {"uid", t.uid},
          {"name", t.name},
          {"created_at", core::Rfc3339(t.created_at)},
          {"expires_at", t.expires_at ? json(core::Rfc3339(*t.expires_at)) : json(nullptr)},
          {"revoked_at", t.revoked_at ? json(core::Rfc3339(*t.revoked_at)) : json(nullptr)}};
}

}  // namespace

core::Result<std::string> NewTokenSecret(std::string_view prefix) {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::Unavailable(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  std::string secret(prefix);
  core::AppendHex(secret, std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
  return secret;
}

core::Result<Caller> TokenApi::Authenticate(const std::string& secret) {
  if (secret.rfind("glt_", 0) != 0) {
    return core::Unauthenticated("that is not a gleaner token (they start with glt_)");
  }
  auto found = [&] {
    core::MutexLock lock(store_mu_);
    return tokens_.FindToken(core::Sha256Hex(secret));
  }();
  if (!found.ok()) {
    if (found.status().code() != core::StatusCode::kNotFound) return found.status();
    return core::Unauthenticated(
        "unknown or revoked token; create one with `gleaner token create` on the server host");
  }
  if (found->expires_at && clock_.Now() >= *found->expires_at) {
    return core::Unauthenticated("this token expired at " + core::Rfc3339(*found->expires_at) +
                                 "; create a new one with `gleaner token create`");
  }
  if (found->uid == 0 && !policy_.allow_root && (ScopesOf(*found) & kScopeSubmit) != 0) {
    return core::Unauthenticated(
        "this root token may submit, and tokens that start jobs as root are refused ([api] "
        "allow_root_tokens is off); create one without the submit scope (gleaner token create), "
        "or use a token of an ordinary user");
  }
  return Caller{found->uid, found->user, true, false, ScopesOf(*found), found->projects};
}

std::optional<uint8_t> ParseScopes(const std::vector<std::string>& names) {
  uint8_t scopes = 0;
  for (const std::string& n : names) {
    if (n == "read") {
      scopes |= kScopeRead;
    } else if (n == "submit") {
      scopes |= kScopeSubmit;
    } else if (n == "approve") {
      scopes |= kScopeApprove;
    } else if (n == "admin") {
      scopes |= kScopeAdmin;
    } else {
      return std::nullopt;
    }
  }
  return scopes;
}

std::vector<std::string> ScopeNames(uint8_t scopes) {
  std::vector<std::string> names;
  for (const auto& [bit, name] :
       {std::pair{kScopeRead, "read"}, std::pair{kScopeSubmit, "submit"},
        std::pair{kScopeApprove, "approve"}, std::pair{kScopeAdmin, "admin"}}) {
    if ((scopes & bit) != 0) names.emplace_back(name);
  }
  return names;
}

namespace {

// A token as its history names it: never its secret.
std::string TokenDetail(const store::TokenRecord& t) {
  std::string scopes;
  for (const std::string& s : ScopeNames(ScopesOf(t))) scopes += (scopes.empty() ? "" : ",") + s;
  std::string projects;
  for (const std::string& p : t.projects) projects += (projects.empty() ? "" : ",") + p;
  return "token " + std::to_string(t.id) + (t.name.empty() ? "" : " \"" + t.name + "\"") + " (" +
         scopes + (projects.empty() ? "" : "; projects " + projects) + ")" +
         (t.expires_at ? ", expiring " + core::Rfc3339(*t.expires_at) : "");
}

}  // namespace

HttpResponse TokenApi::Handle(const HttpRequest& req, const Caller& caller) {
  std::string query;
  const std::vector<std::string> seg = Segments(req.path, &query);
  if (seg.size() == 2) {
    if (req.method == "POST") return Create(req, caller);
    if (req.method != "GET") return WrongMethod(req);
    core::MutexLock lock(store_mu_);
    auto all = tokens_.ListTokens();
    if (!all.ok()) return ErrorResponse(all.status());
    json list = json::array();
    for (const store::TokenRecord& t : *all) {
      if (t.uid == caller.uid || caller.admin()) list.push_back(TokenToJson(t));
    }
    return Json(200, {{"tokens", list}});
  }
  if (seg.size() != 4 || seg[3] != "revoke") return NoSuchEndpoint(req);
  if (req.method != "POST") return WrongMethod(req);
  auto id = ParseId(seg[2], "token");
  if (!id.ok()) return ErrorResponse(id.status());
  core::MutexLock lock(store_mu_);
  auto all = tokens_.ListTokens();
  if (!all.ok()) return ErrorResponse(all.status());
  for (const store::TokenRecord& t : *all) {
    if (t.id != *id) continue;
    if (t.uid != caller.uid && !caller.admin()) {
      return ErrorResponse(core::PermissionDenied("token " + seg[2] + " belongs to " + t.user +
                                                  "; only they (or root) may revoke it"));
    }
    if (core::Status s = tokens_.RevokeToken(*id, clock_.Now()); !s.ok()) return ErrorResponse(s);
    store::TokenRecord revoked = t;
    revoked.revoked_at = clock_.Now();
    auto recorded = tokens_.AppendEvent(
        {0, clock_.Now(), "token_revoked", std::nullopt, t.user, caller.user, {}, TokenDetail(t)});
    if (!recorded.ok()) return ErrorResponse(recorded.status());
    return Json(200, TokenToJson(revoked));
  }
  return ErrorResponse(core::NotFound("no token " + seg[2]));
}

HttpResponse TokenApi::Create(const HttpRequest& req, const Caller& caller) {
  if (caller.by_token) {
    return ErrorResponse(core::PermissionDenied(
        "tokens are created on the server host (`gleaner token create`), not with a token"));
  }
  const json body = req.body.empty() ? json::object() : core::ParseUntrustedJson<json>(req.body);
  if (!body.is_object())
    return ErrorResponse(core::InvalidArgument("the body is not a JSON object"));
  const auto strings = [](const json& v) {
    return v.is_array() && v.size() <= 64 && std::all_of(v.begin(), v.end(), [](const json& x) {
             return x.is_string() && !x.get<std::string>().empty() &&
                    x.get<std::string>().size() <= kMaxTokenNameBytes;
           });
  };
  for (const auto& [key, value] : body.items()) {
    const bool known = ((key == "name" || key == "user") && value.is_string()) ||
                       ((key == "scopes" || key == "projects") && strings(value));
    if (!known) {
      return ErrorResponse(core::InvalidArgument(
          "token requests take \"name\" and \"user\" (strings), \"scopes\" and \"projects\" "
          "(lists of names); \"" +
          key.substr(0, 64) + "\" is not one"));
    }
  }
  if (body.value("name", "").size() > kMaxTokenNameBytes ||
      body.value("user", "").size() > kMaxTokenNameBytes) {
    return ErrorResponse(core::InvalidArgument("a token's name and user are at most " +
                                               std::to_string(kMaxTokenNameBytes) + " bytes"));
  }
  store::TokenRecord t;
  t.user = body.value("user", caller.user);
  t.uid = caller.uid;
  t.name = body.value("name", "");
  t.created_at = clock_.Now();
  if (t.user != caller.user) {
    if (!caller.admin()) {
      return ErrorResponse(core::PermissionDenied("only root may create tokens for other users"));
    }
    const std::optional<uint32_t> uid = uid_of_(t.user);
    if (!uid) return ErrorResponse(core::InvalidArgument("no local user \"" + t.user + "\""));
    t.uid = *uid;
  }
  t.expires_at = t.created_at + policy_.lifetime;
  if (body.contains("scopes")) {
    const std::vector<std::string> names = body["scopes"];
    const std::optional<uint8_t> scopes = ParseScopes(names);
    if (!scopes || *scopes == 0) {
      return ErrorResponse(
          core::InvalidArgument("scopes: expected one or more of read, submit, approve, admin"));
    }
    t.scopes = ScopeNames(*scopes);
  }
  // Root's tokens read, approve and administer, but never start a job as
  // root over TCP, unless the site allows it: by default they are made so.
  if (t.uid == 0 && !policy_.allow_root) {
    if (!t.scopes) {
      t.scopes = ScopeNames(kRootTokenScopes);
    } else if ((ScopesOf(t) & kScopeSubmit) != 0) {
      return ErrorResponse(core::PermissionDenied(
          "a root token with the submit scope would let whoever holds it run jobs as root over "
          "TCP; leave submit out (--scope read,approve,admin), create one for an ordinary user "
          "(--user NAME), or set allow_root_tokens = true under [api] in gleaner.toml"));
    }
  }
  if (body.contains("projects")) t.projects = body["projects"].get<std::vector<std::string>>();
  auto secret = NewTokenSecret();
  if (!secret.ok()) return ErrorResponse(secret.status());
  core::MutexLock lock(store_mu_);
  auto saved = tokens_.AddToken(t, core::Sha256Hex(*secret));
  if (!saved.ok()) return ErrorResponse(saved.status());
  // No token works without its creation in the history.
  auto recorded = tokens_.AppendEvent({0,
                                       t.created_at,
                                       "token_created",
                                       std::nullopt,
                                       t.user,
                                       caller.user,
                                       {},
                                       TokenDetail(*saved)});
  if (!recorded.ok()) {
    tokens_.RevokeToken(saved->id, t.created_at).IgnoreError();
    return ErrorResponse(recorded.status());
  }
  json doc = TokenToJson(*saved);
  doc["token"] = *secret;
  return Json(201, doc);
}

HttpResponse TokenApi::CreateJoinToken(const HttpRequest& req, const Caller& caller) {
  if (req.method != "POST") return WrongMethod(req);
  // Whoever may issue a join token may hand a host's jobs, and their
  // users' environments, to any machine: root, or the daemon's own user,
  // and only where the kernel vouches for them.
  if (caller.by_token || caller.anonymous || (!caller.admin() && caller.uid != geteuid())) {
    return ErrorResponse(core::PermissionDenied(
        "join tokens are issued by root on a coordinator host (gleaner agent-token create)"));
  }
  const json body = core::ParseUntrustedJson<json>(req.body);
  if (!body.is_object() || !body.contains("host") || !body["host"].is_string()) {
    return ErrorResponse(core::InvalidArgument(
        "a join token request is {\"host\": NAME, \"replace\": false, \"hours\": 24}"));
  }
  for (const auto& [key, value] : body.items()) {
    const bool known = (key == "host") || (key == "replace" && value.is_boolean()) ||
                       (key == "hours" && value.is_number_integer());
    if (!known) {
      return ErrorResponse(core::InvalidArgument(
          "\"" + key.substr(0, 64) +
          "\": join token requests take \"host\" (a string), \"replace\" (true or false) and "
          "\"hours\" (a whole number)"));
    }
  }
  store::JoinToken t;
  t.host = body["host"];
  if (auto s = cluster::CheckAgentName(t.host); !s.ok()) return ErrorResponse(s);
  t.replace = body.value("replace", false);
  const int64_t hours = body.value("hours", int64_t{24});
  if (hours < 1 || hours > 720) {
    return ErrorResponse(core::InvalidArgument("hours: from 1 to 720 (30 days)"));
  }
  t.created_at = clock_.Now();
  t.expires_at = t.created_at + core::Seconds(hours * 3600);
  auto secret = NewTokenSecret("gjt_");
  if (!secret.ok()) return ErrorResponse(secret.status());
  core::MutexLock lock(store_mu_);
  auto generation = tokens_.AgentGeneration(t.host);
  if (!generation.ok()) return ErrorResponse(generation.status());
  if (*generation > 0 && !t.replace) {
    return ErrorResponse(
        core::FailedPrecondition("host " + t.host +
                                 " has joined already; a token that lets another machine take its "
                                 "place (and cuts off the agent there now) needs --replace"));
  }
  if (auto s = tokens_.AddJoinToken(t, core::Sha256Hex(*secret)); !s.ok()) return ErrorResponse(s);
  auto recorded = tokens_.AppendEvent({0,
                                       t.created_at,
                                       "join_token_created",
                                       std::nullopt,
                                       "",
                                       caller.user,
                                       {},
                                       "for host " + t.host + (t.replace ? ", to replace it" : "") +
                                           ", until " + core::Rfc3339(t.expires_at)});
  if (!recorded.ok()) return ErrorResponse(recorded.status());
  return Json(201, {{"host", t.host},
                    {"token", *secret},
                    {"replace", t.replace},
                    {"expires_at", core::Rfc3339(t.expires_at)}});
}

}  // namespace gleaner::server
