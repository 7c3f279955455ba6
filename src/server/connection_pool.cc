#include "server/connection_pool.h"

#include <sys/resource.h>

#include <algorithm>
#include <map>

#include "core/mutex.h"

namespace gleaner::server {

struct ConnectionPoolCounts {
  explicit ConnectionPoolCounts(ConnectionLimits l) : limits(l) {}
  const ConnectionLimits limits;
  mutable core::Mutex mu;
  size_t open GLEANER_GUARDED_BY(mu) = 0;
  std::map<std::string, size_t> by_peer GLEANER_GUARDED_BY(mu);
};

namespace {

constexpr size_t kMaxPerPeer = 256;
constexpr size_t kMaxTcp = 65536;

size_t PerPeer(size_t total) { return std::max<size_t>(1, std::min(kMaxPerPeer, total / 4)); }

}  // namespace

size_t ConnectionDescriptorBudget() {
  static const size_t budget = [] {
    // The soft limit as it is: raising it would raise it for the jobs too,
    // which inherit it. The shipped units set LimitNOFILE.
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return size_t{768};
    const size_t have =
        limit.rlim_cur == RLIM_INFINITY ? size_t{1} << 20 : static_cast<size_t>(limit.rlim_cur);
    const size_t reserve = std::clamp<size_t>(have / 4, 64, 1024);
    return have > reserve ? have - reserve : size_t{1};
  }();
  return budget;
}

ConnectionLimits TcpConnectionLimits() {
  const size_t total = std::max<size_t>(1, std::min(kMaxTcp, ConnectionDescriptorBudget() * 3 / 4));
  return {total, PerPeer(total)};
}

ConnectionLimits UnixConnectionLimits() {
  const size_t total = std::max<size_t>(1, ConnectionDescriptorBudget() / 4);
  return {total, PerPeer(total)};
}

ConnectionPool::ConnectionPool(ConnectionLimits limits)
    : counts_(std::make_shared<ConnectionPoolCounts>(limits)) {}

ConnectionPool& ConnectionPool::Tcp() {
  static ConnectionPool* pool = new ConnectionPool(TcpConnectionLimits());  // never destroyed
  return *pool;
}

ConnectionPool& ConnectionPool::Unix() {
  static ConnectionPool* pool = new ConnectionPool(UnixConnectionLimits());
  return *pool;
}

ConnectionPool::Refusal ConnectionPool::Take(const std::string& peer, bool unlimited, Slot* slot) {
  {
    core::MutexLock lock(counts_->mu);
    size_t& mine = counts_->by_peer[peer];
    if (!unlimited) {
      Refusal refusal = Refusal::kNone;
      if (mine >= counts_->limits.per_peer) {
        refusal = Refusal::kPeerFull;
      } else if (counts_->open >= counts_->limits.total) {
        refusal = Refusal::kPoolFull;
      }
      if (refusal != Refusal::kNone) {
        if (mine == 0) counts_->by_peer.erase(peer);
        return refusal;
      }
    }
    ++mine;
    ++counts_->open;
  }
  *slot = Slot();
  slot->counts_ = counts_;
  slot->peer_ = peer;
  return Refusal::kNone;
}

ConnectionLimits ConnectionPool::limits() const { return counts_->limits; }

size_t ConnectionPool::open() const {
  core::MutexLock lock(counts_->mu);
  return counts_->open;
}

size_t ConnectionPool::open_by(const std::string& peer) const {
  core::MutexLock lock(counts_->mu);
  const auto it = counts_->by_peer.find(peer);
  return it == counts_->by_peer.end() ? 0 : it->second;
}

ConnectionPool::Slot& ConnectionPool::Slot::operator=(Slot&& o) noexcept {
  if (this != &o) {
    Release();
    counts_ = std::move(o.counts_);
    peer_ = std::move(o.peer_);
    o.counts_.reset();
  }
  return *this;
}

void ConnectionPool::Slot::Release() {
  if (counts_ == nullptr) return;
  {
    core::MutexLock lock(counts_->mu);
    --counts_->open;
    const auto it = counts_->by_peer.find(peer_);
    if (it != counts_->by_peer.end() && --it->second == 0) counts_->by_peer.erase(it);
  }
  counts_.reset();
}

}  // namespace gleaner::server
