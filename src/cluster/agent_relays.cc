#include "cluster/agent_relays.h"

#include <algorithm>

namespace gleaner::cluster {

void OrderWaiters::Wait(const std::string& host, uint64_t orders, uint64_t seen,
                        std::function<void(uint64_t)> wake, DeferredCalls& calls) {
  if (orders > seen) {
    calls.Add([wake = std::move(wake), orders] { wake(orders); });
    return;
  }
  std::function<void(uint64_t)>& waiter = waiters_[host];
  if (waiter) calls.Add([old = std::move(waiter), orders] { old(orders); });
  waiter = std::move(wake);
}

void OrderWaiters::Notify(const std::string& host, uint64_t orders, DeferredCalls& calls) {
  const auto waiter = waiters_.find(host);
  if (waiter == waiters_.end()) return;
  calls.Add([wake = std::move(waiter->second), orders] { wake(orders); });
  waiters_.erase(waiter);
}

core::Status LogRelay::Ask(const std::string& host, sched::JobId job, bool err, uint64_t offset,
                           std::function<void(core::Result<LogChunk>)> answer,
                           core::TimePoint now) {
  const auto open = std::count_if(pending_.begin(), pending_.end(),
                                  [&](const auto& p) { return p.second.host == host; });
  if (static_cast<size_t>(open) >= kMaxOpenPerHost) {
    return core::ResourceExhausted("host " + host + " has " + std::to_string(kMaxOpenPerHost) +
                                   " log requests open already; try again shortly");
  }
  const uint64_t id = next_id_++;
  pending_[id] = {host, {id, job, err, offset}, std::move(answer), now};
  return core::Status::Ok();
}

void LogRelay::Exchange(const std::string& agent, const std::vector<LogChunk>& chunks,
                        AgentReply& reply, DeferredCalls& calls) {
  for (const LogChunk& chunk : chunks) {
    const auto pending = pending_.find(chunk.id);
    if (pending == pending_.end() || pending->second.host != agent) continue;
    core::Result<LogChunk> got =
        chunk.error.empty() ? core::Result<LogChunk>(chunk)
                            : core::Result<LogChunk>(
                                  core::FailedPrecondition("host " + agent + ": " + chunk.error));
    calls.Add([answer = std::move(pending->second.answer), got = std::move(got)] { answer(got); });
    pending_.erase(pending);
  }
  for (const auto& [id, p] : pending_) {
    if (p.host == agent && reply.logs.size() < kMaxPerReply) reply.logs.push_back(p.request);
  }
}

void LogRelay::Expire(core::TimePoint now, DeferredCalls& calls) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now - it->second.asked <= kWait) {
      ++it;
      continue;
    }
    calls.Add([answer = std::move(it->second.answer), host = it->second.host] {
      answer(core::Unavailable("host " + host + " did not send the log within 10 s"));
    });
    it = pending_.erase(it);
  }
}

void HolderRelay::Ask(const std::string& host, const HolderRequest& request) {
  std::vector<HolderRequest>& asked = asked_[host];
  if (std::find(asked.begin(), asked.end(), request) == asked.end()) asked.push_back(request);
}

std::vector<HolderRequest> HolderRelay::Take(const std::string& host) {
  auto asked = asked_.extract(host);
  return asked ? std::move(asked.mapped()) : std::vector<HolderRequest>{};
}

}  // namespace gleaner::cluster
