#include "daemon/coordinator_client.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "cluster/agent_credentials.h"
#include "core/json_depth.h"
#include "core/private_file.h"
#include "daemon/secrets.h"

namespace gleaner::daemon {

namespace {

// How often an agent whose credential is refused may try a new join token
// from its file.
constexpr core::Duration kRejoinEvery = core::Seconds(30);

}  // namespace

core::Result<std::vector<net::Endpoint>> ParseCoordinatorUrls(const std::string& list,
                                                              const net::TlsFiles& tls) {
  std::vector<net::Endpoint> out;
  std::stringstream in(list);
  for (std::string url; std::getline(in, url, ',');) {
    if (url.empty()) continue;
    GLEANER_ASSIGN_OR_RETURN(net::Endpoint e, net::ParseServerUrl(url));
    GLEANER_RETURN_IF_ERROR(net::UseClientTls(tls, &e));
    out.push_back(std::move(e));
  }
  if (out.empty()) {
    return core::InvalidArgument(
        "--server: give the coordinators' URLs, http(s)://HOST:PORT[,...]");
  }
  return out;
}

Coordinators::Coordinators(const std::vector<net::Endpoint>& endpoints) {
  for (const net::Endpoint& e : endpoints) {
    clients_.push_back(std::make_unique<net::HttpClient>(e));
  }
}

core::Result<nlohmann::json> Coordinators::Post(const std::string& target,
                                                const nlohmann::json& body,
                                                const std::string& token, core::Duration timeout) {
  core::Status last = core::Unavailable("no coordinator");
  // What a host reports may hold bytes that are not UTF-8 (a process's
  // command line): replaced, never a throw.
  const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  for (size_t tried = 0; tried < clients_.size(); ++tried) {
    net::HttpClient& client = *clients_[current_];
    const std::string where = client.endpoint().ToString();
    auto answer = client.Call("POST", target, text, token, timeout);
    if (answer.ok() && answer->first == 200) {
      nlohmann::json j = core::ParseUntrustedJson<nlohmann::json>(answer->second);
      if (!j.is_discarded()) return j;
      last = core::Unavailable(where + " answered something that is not JSON");
    } else if (answer.ok()) {
      const nlohmann::json j = core::ParseUntrustedJson<nlohmann::json>(answer->second);
      const std::string why =
          j.is_object() && j.contains("error") ? j["error"].dump() : answer->second;
      const std::string said = where + ": " + why;
      if (answer->first == 401) return core::Unauthenticated(said);
      if (answer->first == 404) return core::NotFound(said);
      last = core::Unavailable(where + " answered " + std::to_string(answer->first) + ": " + why);
    } else {
      last = answer.status();
    }
    current_ = (current_ + 1) % clients_.size();
  }
  return last;
}

void Coordinators::Interrupt() {
  for (auto& c : clients_) c->Interrupt();
}

OrderWaiter::OrderWaiter(const std::vector<net::Endpoint>& endpoints, agent::Sampler& sampler,
                         const cluster::Log& log)
    : coordinators_(endpoints), sampler_(sampler), log_(log) {}

OrderWaiter::~OrderWaiter() { Stop(); }

void OrderWaiter::Start() {
  thread_ = std::thread([this] { Run(); });
}

void OrderWaiter::Stop() {
  stop_ = true;
  coordinators_.Interrupt();
  if (thread_.joinable()) thread_.join();
}

void OrderWaiter::Heard(const std::string& credential, uint64_t orders) {
  core::MutexLock lock(mu_);
  credential_ = credential;
  seen_ = std::max(seen_, orders);
}

void OrderWaiter::Run() {
  while (!stop_) {
    std::string credential;
    uint64_t seen;
    {
      core::MutexLock lock(mu_);
      credential = credential_;
      seen = seen_;
    }
    const auto asked = std::chrono::steady_clock::now();
    auto answer =
        coordinators_.Post("/v1/agents/wait", {{"orders", seen}}, credential, kWaitTimeout);
    if (stop_) return;
    if (answer.ok()) {
      const uint64_t orders = answer->value("orders", uint64_t{0});
      if (orders <= seen && std::chrono::steady_clock::now() - asked < std::chrono::seconds(1)) {
        Pause();  // nothing new, yet answered at once: never a busy loop
      }
      if (orders > seen) {
        {
          // Not asked again for the same orders while the pass it wakes
          // reports.
          core::MutexLock lock(mu_);
          seen_ = std::max(seen_, orders);
        }
        sampler_.Wake();
      }
      continue;
    }
    if (answer.status().code() == core::StatusCode::kNotFound) {
      log_(
          "the coordinator takes no long polls (an older gleaner): this agent hears of "
          "starts at its next report");
      return;
    }
    // A standby, a coordinator away, a credential being renewed: the
    // reports carry on meanwhile; try again shortly.
    Pause();
  }
}

void OrderWaiter::Pause() {
  for (int i = 0; i < 10 && !stop_; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

core::Result<std::unique_ptr<AgentReporter>> AgentReporter::Join(AgentIdentity identity,
                                                                 Coordinators& coordinators,
                                                                 const core::Clock& clock,
                                                                 const cluster::Log& log) {
  std::unique_ptr<AgentReporter> r(
      new AgentReporter(std::move(identity), coordinators, clock, log));
  const AgentIdentity& id = r->identity_;
  std::istringstream in(core::ReadPrivateFile(id.data_dir + "/agent.credential").value_or(""));
  if (std::string kept; in >> kept && kept.starts_with("agent." + id.name + ".")) {
    r->credential_ = kept;
    return r;
  }
  if (id.join_token_file.empty()) {
    return core::InvalidArgument(
        "this agent has not joined yet: on a coordinator host, root runs `gleaner agent-token "
        "create --host " +
        id.name + "`; put the token in a file only root can read and pass --join-token-file FILE");
  }
  GLEANER_ASSIGN_OR_RETURN(r->spent_, ReadJoinToken(id.join_token_file));
  GLEANER_ASSIGN_OR_RETURN(r->credential_, r->Spend(r->spent_));
  return r;
}

core::Result<std::string> AgentReporter::Spend(const std::string& token) {
  const std::string path = identity_.data_dir + "/agent.credential";
  GLEANER_ASSIGN_OR_RETURN(
      nlohmann::json joined,
      coordinators_.Post("/v1/agents/join", {{"name", identity_.name}, {"join_token", token}}, ""));
  const std::string credential = joined.value("credential", "");
  if (!core::WritePrivateFile(path, credential).ok()) {
    return core::Unavailable("cannot keep the credential in " + path);
  }
  log_("joined the cluster as " + identity_.name + "; credential kept in " + path);
  return credential;
}

core::Result<cluster::AgentReply> AgentReporter::Report(const cluster::AgentReport& report) {
  const nlohmann::json body = cluster::ReportToJson(report);
  auto reply = coordinators_.Post("/v1/agents/report", body, credential_);
  // The credential was cut off (the secret rotated, or this host
  // replaced): join again if the token file holds a token not yet tried.
  if (!reply.ok() && reply.status().code() == core::StatusCode::kUnauthenticated &&
      !identity_.join_token_file.empty() && clock_.Now() - last_join_ > kRejoinEvery) {
    auto fresh_token = ReadJoinToken(identity_.join_token_file);
    if (fresh_token.ok() && *fresh_token != spent_) {
      last_join_ = clock_.Now();
      spent_ = *fresh_token;
      log_("the coordinator refused this agent's credential (" + reply.status().message() +
           "); joining again with " + identity_.join_token_file);
      GLEANER_ASSIGN_OR_RETURN(credential_, Spend(*fresh_token));
      reply = coordinators_.Post("/v1/agents/report", body, credential_);
    }
  }
  if (!reply.ok()) return reply.status();
  auto decoded = cluster::ReplyFromJson(*reply);
  if (decoded.ok() && waiter_ != nullptr) waiter_->Heard(credential_, decoded->orders);
  return decoded;
}

}  // namespace gleaner::daemon
