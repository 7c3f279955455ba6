#pragma once

// An agent's side of the coordinators: failover between them, joining
// with a one-time token, reporting (and joining again when the credential
// is cut off), and the long poll that wakes the sampler when orders wait.

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "agent/sampler.h"
#include "cluster/agent_protocol.h"
#include "cluster/log.h"
#include "core/clock.h"
#include "core/mutex.h"
#include "core/result.h"
#include "net/http_client.h"
#include "net/tls.h"

namespace gleaner::daemon {

// Short enough that a dead coordinator costs a pass, not the owner's time.
inline constexpr core::Duration kReportTimeout = core::Seconds(2);

// --server: the coordinators' URLs, comma-separated, each given the
// client's TLS files.
core::Result<std::vector<net::Endpoint>> ParseCoordinatorUrls(const std::string& list,
                                                              const net::TlsFiles& tls);

// The coordinators, tried in turn: the last one that answered first. A
// standby answers 503 and the next is tried. Each keeps its connection
// open between calls.
class Coordinators {
 public:
  explicit Coordinators(const std::vector<net::Endpoint>& endpoints);

  // POSTs `body` to `target` on each coordinator in turn until one answers
  // 200; the answer's JSON. Any other answer is kept as the error; a 401 or
  // a 404 ends the round (another coordinator would say the same).
  core::Result<nlohmann::json> Post(const std::string& target, const nlohmann::json& body,
                                    const std::string& token,
                                    core::Duration timeout = kReportTimeout);

  // Ends a call under way from another thread, and every later one.
  void Interrupt();

 private:
  std::vector<std::unique_ptr<net::HttpClient>> clients_;
  size_t current_ = 0;
};

// The agent's long poll (/v1/agents/wait): a thread that asks the
// coordinator to answer once it has orders for this host, and then wakes
// the sampler, so a start is heard of at once, not at the next pass.
class OrderWaiter {
 public:
  OrderWaiter(const std::vector<net::Endpoint>& endpoints, agent::Sampler& sampler,
              const cluster::Log& log);
  ~OrderWaiter();

  void Start();
  void Stop();
  // From each reply to a report: its credential, and the orders it brought.
  void Heard(const std::string& credential, uint64_t orders);

 private:
  void Run();
  void Pause();

  // Beyond the coordinator's 25 s hold.
  static constexpr core::Duration kWaitTimeout = core::Seconds(35);
  Coordinators coordinators_;
  agent::Sampler& sampler_;
  const cluster::Log& log_;
  std::atomic<bool> stop_{false};
  core::Mutex mu_;
  std::string credential_ GLEANER_GUARDED_BY(mu_);
  uint64_t seen_ GLEANER_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

// Who an agent is to its coordinators, and how it reports. The credential
// is kept in DATA_DIR/agent.credential (mode 600, never through a link).
struct AgentIdentity {
  std::string data_dir;
  std::string name;
  std::string join_token_file;  // empty: none given
};

// Reports a host to the coordinators with its credential: the one kept
// from an earlier join, or one from the token in the join-token file. When
// the coordinators cut the credential off (the host replaced), it joins
// again with the file's token if that is one not yet tried, at most every
// 30 s, so a bad token cannot flood the coordinators.
class AgentReporter {
 public:
  // Joins (or takes the kept credential); an error says why it cannot.
  static core::Result<std::unique_ptr<AgentReporter>> Join(AgentIdentity identity,
                                                           Coordinators& coordinators,
                                                           const core::Clock& clock,
                                                           const cluster::Log& log);

  core::Result<cluster::AgentReply> Report(const cluster::AgentReport& report);
  // Tells `waiter` of each reply's orders (nullptr: nobody).
  void TellOrdersTo(OrderWaiter* waiter) { waiter_ = waiter; }
  const std::string& credential() const { return credential_; }

 private:
  AgentReporter(AgentIdentity identity, Coordinators& coordinators, const core::Clock& clock,
                const cluster::Log& log)
      : identity_(std::move(identity)), coordinators_(coordinators), clock_(clock), log_(log) {}
  // Spends `token`; the credential it brings, kept.
  core::Result<std::string> Spend(const std::string& token);

  AgentIdentity identity_;
  Coordinators& coordinators_;
  const core::Clock& clock_;
  const cluster::Log& log_;
  std::string credential_;
  std::string spent_;  // the join token last tried: a token is tried once
  core::TimePoint last_join_{};
  OrderWaiter* waiter_ = nullptr;
};

}  // namespace gleaner::daemon
