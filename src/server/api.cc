#include "server/api.h"

#include "server/anonymous_read.h"
#include "server/process_privacy.h"
#include "server/routing.h"
#include "server/ui_files.h"

namespace gleaner::server {

core::Result<Caller> Api::Identify(const HttpRequest& request, const Peer& peer) {
  if (peer.uid) {
    return Caller{*peer.uid, options_.user_name(*peer.uid), false, false, kAllScopes, {}};
  }
  const auto header = request.headers.find("authorization");
  // Only a request without any token reads anonymously: a wrong or revoked
  // token is still a 401, so that the dashboard asks for a new one.
  if (header == request.headers.end() && options_.anonymous_read && AnonymousMayRead(request)) {
    return Caller{kAnonymousUid, "anonymous", false, true, kScopeRead, {}};
  }
  if (header == request.headers.end() || header->second.rfind("Bearer ", 0) != 0) {
    return core::Unauthenticated(
        "this API needs a token: send \"Authorization: Bearer glt_...\" (gleaner --token); "
        "create one with `gleaner token create` on the server host");
  }
  return tokens_.Authenticate(header->second.substr(7));
}

namespace {

// What a token must be allowed to do `request`: reading is "read",
// deciding approvals "approve", managing tokens, the policy and hosts, and
// giving up on a parked holder "admin", anything else that changes
// something "submit".
core::Status WithinScopes(const HttpRequest& request, const std::vector<std::string>& seg,
                          const Caller& caller, bool root_may_submit) {
  std::pair<Scope, const char*> needed = {kScopeSubmit, "submit"};
  if (request.method == "GET") {
    needed = {kScopeRead, "read"};
  } else if (seg.size() == 4 && seg[1] == "jobs" && (seg[3] == "approve" || seg[3] == "deny")) {
    needed = {kScopeApprove, "approve"};
  } else if (seg.size() >= 2 && (seg[1] == "tokens" || seg[1] == "agent-tokens" ||
                                 seg[1] == "policy" || seg[1] == "hosts")) {
    needed = {kScopeAdmin, "admin"};
  } else if (seg.size() == 4 && seg[1] == "gpus" && observe::ParseHolderAsk(seg[3]) &&
             observe::GivesUp(*observe::ParseHolderAsk(seg[3]))) {
    needed = {kScopeAdmin, "admin"};
  }
  if (caller.May(needed.first)) return core::Status::Ok();
  if (caller.uid == 0 && needed.first == kScopeSubmit && !root_may_submit) {
    return core::PermissionDenied(
        "this root token may not " + request.method + " " + request.path +
        ": root's tokens never submit, so that none starts a job as root ([api] "
        "allow_root_tokens); run it as root on the server host, or with an ordinary user's token");
  }
  std::string has;
  for (const std::string& s : ScopeNames(caller.scopes)) has += (has.empty() ? "" : ", ") + s;
  return core::PermissionDenied("this token may not " + request.method + " " + request.path +
                                ": that needs the \"" + needed.second +
                                "\" scope, and its scopes are " + (has.empty() ? "none" : has) +
                                " (gleaner token create --scope " + needed.second + ")");
}

}  // namespace

HttpResponse Api::Handle(const HttpRequest& request, const Peer& peer) {
  if (IsUiPath(request.path)) return ServeUiFile(request);
  auto caller = Identify(request, peer);
  if (!caller.ok()) return ErrorResponse(caller.status());
  std::string query;
  const std::vector<std::string> seg = Segments(request.path, &query);
  if (caller->by_token) {
    if (core::Status s = WithinScopes(request, seg, *caller, options_.tokens.allow_root); !s.ok()) {
      return ErrorResponse(s);
    }
  }
  if (seg.size() == 1 && seg[0] == "metrics" && options_.metrics) {
    if (request.method != "GET") return WrongMethod(request);
    auto params = ParseQuery(query);
    if (!params.ok()) return ErrorResponse(params.status());
    const auto dcgm = params->find("dcgm");
    auto counts = [&] {
      core::MutexLock lock(store_mu_);
      return jobs_store_.CountByState();
    }();
    if (!counts.ok()) return ErrorResponse(counts.status());
    std::map<std::string, int64_t> jobs;
    for (const auto& [state, count] : *counts) {
      if (!store::IsFinal(state)) jobs[std::string(store::JobStateName(state))] = count;
    }
    HttpResponse r{200, options_.metrics(jobs, dcgm != params->end() && dcgm->second == "1")};
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return r;
  }
  if (seg.size() < 2 || seg[0] != "v1") return NoSuchEndpoint(request);
  if (seg.size() == 4 && seg[1] == "jobs" && seg[3] == "terminal") {
    return Terminal(request, peer, seg[2]);
  }
  if (seg[1] == "jobs") return jobs_.Handle(request, *caller);
  if (seg[1] == "events" && seg.size() == 2) return jobs_.Events(request, *caller);
  if (seg[1] == "approvals" && seg.size() == 2) return jobs_.Approvals(request, *caller);
  if (seg[1] == "policy") return policy_.Handle(request, *caller);
  if (seg[1] == "tokens") return tokens_.Handle(request, *caller);
  if (seg[1] == "agent-tokens" && seg.size() == 2) return tokens_.CreateJoinToken(request, *caller);
  if (seg[1] == "cost") {
    if (!cost_) return ErrorResponse(core::Unavailable("this gleaner keeps no history to price"));
    return cost_->Handle(request, *caller);
  }
  if (seg[1] == "history" || seg[1] == "profiles") {
    if (!history_) return ErrorResponse(core::Unavailable("this gleaner keeps no history"));
    return history_->Handle(request);
  }
  if (seg.size() == 4 && seg[1] == "gpus" && observe::ParseHolderAsk(seg[3])) {
    return Parking(request, *caller, seg[2], *observe::ParseHolderAsk(seg[3]));
  }
  if (seg.size() == 4 && seg[1] == "hosts" && (seg[3] == "forget" || seg[3] == "accept")) {
    return HostGpus(request, *caller, seg[2], seg[3] == "accept");
  }
  if (seg.size() != 2) return NoSuchEndpoint(request);
  if (seg[1] == "whoami") {
    if (request.method != "GET") return WrongMethod(request);
    if (caller->anonymous) {
      return Json(200,
                  {{"user", nullptr}, {"uid", nullptr}, {"by", "anonymous"}, {"admin", false}});
    }
    // The projects whose waiting jobs the caller may decide.
    nlohmann::json approves = nlohmann::json::array();
    const auto policy = submit_policy_.Get();
    if (policy && caller->May(kScopeApprove)) {
      for (const std::string& p : policy->projects().ApprovedBy(caller->user)) {
        if (caller->ActsFor(p)) approves.push_back(p);
      }
    }
    return Json(200, {{"user", caller->user},
                      {"uid", caller->uid},
                      {"by", caller->by_token ? "token" : "socket"},
                      {"admin", caller->admin()},
                      {"approves", approves}});
  }
  if (seg[1] == "gpus") {
    if (request.method != "GET") return WrongMethod(request);
    nlohmann::json doc = options_.gpus ? options_.gpus() : nullptr;
    if (doc.is_null()) {
      return ErrorResponse(core::Unavailable("no pass over the GPUs yet; ask again in a second"));
    }
    if (options_.hide_others_commands && !caller->admin()) {
      HideOthersCommands(doc, caller->anonymous ? std::string() : caller->user);
    }
    return Json(200, doc);
  }
  return NoSuchEndpoint(request);
}

HttpResponse Api::Terminal(const HttpRequest& request, const Peer& peer, const std::string& job) {
  if (request.method != "POST") return WrongMethod(request);
  if (options_.terminals == nullptr) {
    return ErrorResponse(core::NotFound(
        "this gleaner runs no interactive sessions: `gleaner up` serves them on its host"));
  }
  // The descriptor can only cross a Unix socket, and there the kernel says
  // who asks.
  if (!peer.uid) {
    return ErrorResponse(core::InvalidArgument(
        "a session's terminal is handed over the local Unix socket only: run `gleaner run` "
        "on the session's host"));
  }
  auto id = ParseId(job, "job");
  if (!id.ok()) return ErrorResponse(id.status());
  auto master = options_.terminals->Take(*id, *peer.uid);
  if (!master.ok()) return ErrorResponse(master.status());
  HttpResponse r = Json(200, {{"job", *id}});
  r.descriptor = std::make_shared<PassedDescriptor>(*master);
  return r;
}

HttpResponse Api::HostGpus(const HttpRequest& request, const Caller& caller,
                           const std::string& host, bool accept) {
  if (request.method != "POST") return WrongMethod(request);
  const std::string command = accept ? "accept" : "forget";
  if (!caller.admin()) {
    return ErrorResponse(core::PermissionDenied("only root " + command +
                                                "s a host's GPUs (gleaner host " + command + ")"));
  }
  if (!options_.host_gpus) {
    return ErrorResponse(core::NotFound("this gleaner runs no cluster: `gleaner host " + command +
                                        "` is for a coordinator"));
  }
  auto done = options_.host_gpus(host, accept);
  if (!done.ok()) return ErrorResponse(done.status());
  return Json(200, {{"host", host},
                    {"gpus", *done},
                    {"message", accept ? "its new GPUs are its own; its next report is heard"
                                       : "its GPUs may now be reported by another host"}});
}

HttpResponse Api::Parking(const HttpRequest& request, const Caller& caller, const std::string& gpu,
                          observe::HolderAsk ask) {
  if (request.method != "POST") return WrongMethod(request);
  if (caller.anonymous) {
    return ErrorResponse(core::Unauthenticated("keeping or unparking a GPU needs a token"));
  }
  if (!options_.parking) {
    return ErrorResponse(
        core::Unavailable("this gleaner parks no holders: parking runs in `gleaner up`"));
  }
  if (core::Status s = options_.parking(gpu, ask, caller); !s.ok()) return ErrorResponse(s);
  const char* done = "";
  switch (ask) {
    case observe::HolderAsk::kKeep:
      done = "its holder is not parked until it computes again";
      break;
    case observe::HolderAsk::kUnpark:
      done = "its parked holder is restored at the next pass";
      break;
    case observe::HolderAsk::kGiveUp:
      done = "its parked holder is given up on at the next pass: left frozen for its user to end";
      break;
    case observe::HolderAsk::kKill:
      done = "its parked holder is given up on and ended at the next pass";
      break;
  }
  return Json(200, {{"gpu", gpu}, {"message", done}});
}

}  // namespace gleaner::server
