#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cluster/agent_protocol.h"
#include "core/clock.h"
#include "core/result.h"

// What passes between someone who asks and a host's agent, which hears
// only in the reply to its next report: the agent's long poll for new
// orders, a job's log read from the host, `gleaner keep`/`unpark` for a
// GPU's holder. None of these classes locks: the coordinator holds them
// under its own lock, and every callback they produce is run by the
// caller once that lock is released (DeferredCalls), so no waiter can
// deadlock with the coordinator.
namespace gleaner::cluster {

class DeferredCalls {
 public:
  void Add(std::function<void()> call) { calls_.push_back(std::move(call)); }
  // The calls gathered so far, to run (RunAll) once the lock is released.
  std::vector<std::function<void()>> Take() { return std::exchange(calls_, {}); }
  static void RunAll(const std::vector<std::function<void()>>& calls) {
    for (const auto& call : calls) call();
  }

 private:
  std::vector<std::function<void()>> calls_;
};

// Each host's agent's long poll, by host name: an agent may wait before its
// first report reaches this coordinator.
class OrderWaiters {
 public:
  // `wake` is called with the host's order count once it is past `seen`:
  // at once (deferred) when `orders` is already, else at the next Notify.
  // A host has one wait: a new one ends the one before, which then hears
  // the count as it is.
  void Wait(const std::string& host, uint64_t orders, uint64_t seen,
            std::function<void(uint64_t)> wake, DeferredCalls& calls);
  // The host's order count grew to `orders`: its waiter, if any, hears it.
  void Notify(const std::string& host, uint64_t orders, DeferredCalls& calls);

 private:
  std::map<std::string, std::function<void(uint64_t)>> waiters_;
};

// Pieces of job logs asked of the hosts where the jobs ran.
class LogRelay {
 public:
  // How long a request waits for the host's answer; a host has at most
  // this many requests open, and a reply asks for at most this many.
  static constexpr core::Duration kWait = core::Seconds(10);
  static constexpr size_t kMaxOpenPerHost = 16;
  static constexpr size_t kMaxPerReply = 4;

  // Asks `host` for a piece of `job`'s log; refused (ResourceExhausted)
  // while the host has kMaxOpenPerHost requests open.
  core::Status Ask(const std::string& host, sched::JobId job, bool err, uint64_t offset,
                   std::function<void(core::Result<LogChunk>)> answer, core::TimePoint now);
  // Hands the pieces `agent`'s report brings to their askers, and puts
  // the ones still wanted of it in `reply`.
  void Exchange(const std::string& agent, const std::vector<LogChunk>& chunks, AgentReply& reply,
                DeferredCalls& calls);
  // Answers requests older than kWait: the host did not send the piece.
  void Expire(core::TimePoint now, DeferredCalls& calls);

 private:
  struct Pending {
    std::string host;
    LogRequest request;
    std::function<void(core::Result<LogChunk>)> answer;
    core::TimePoint asked;
  };
  std::map<uint64_t, Pending> pending_;  // by request id
  uint64_t next_id_ = 1;
};

// `gleaner keep` and `unpark` requests to pass on in each host's next
// reply. One standing request per GPU and ask: asking again changes nothing.
class HolderRelay {
 public:
  void Ask(const std::string& host, const HolderRequest& request);
  std::vector<HolderRequest> Take(const std::string& host);

 private:
  std::map<std::string, std::vector<HolderRequest>> asked_;
};

}  // namespace gleaner::cluster
