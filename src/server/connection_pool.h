#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gleaner::server {

// How many connections the API's servers may hold open, so that clients
// can never take the descriptors the daemon needs for itself: its store,
// its logs, its jobs' pipes, the GPUs' device files. Every connection
// counts, whatever it is doing (sending, waiting for its answer, reading
// it, or kept open between requests).
struct ConnectionLimits {
  size_t total = 0;     // all peers together
  size_t per_peer = 0;  // one IP address, or one local uid
};

// The descriptors this process lets its connections use: its soft
// RLIMIT_NOFILE less a reserve for everything else (a quarter, at least 64
// and at most 1,024).
size_t ConnectionDescriptorBudget();

// The limits for TCP: three quarters of the budget, at most 65,536; the
// remaining quarter is the Unix socket's, so that no remote client can
// keep local users (root included) from being served. One peer may hold
// 256 connections, or a quarter of its kind's total where that is less.
ConnectionLimits TcpConnectionLimits();
ConnectionLimits UnixConnectionLimits();

struct ConnectionPoolCounts;

// Counts the connections of one kind (TCP, or the Unix socket) across every
// server of the process: a peer connected to two ports is still one peer.
// Thread-safe; a Slot gives its place back when it is destroyed.
class ConnectionPool {
 public:
  explicit ConnectionPool(ConnectionLimits limits);

  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& o) noexcept { *this = std::move(o); }
    Slot& operator=(Slot&& o) noexcept;
    ~Slot() { Release(); }
    const std::string& peer() const { return peer_; }

   private:
    friend class ConnectionPool;
    void Release();
    std::shared_ptr<ConnectionPoolCounts> counts_;
    std::string peer_;
  };

  enum class Refusal { kNone, kPeerFull, kPoolFull };
  // A place for a new connection from `peer`, or why there is none.
  // `unlimited` (root on the Unix socket) is counted but never refused.
  Refusal Take(const std::string& peer, bool unlimited, Slot* slot);

  ConnectionLimits limits() const;
  size_t open() const;
  size_t open_by(const std::string& peer) const;

  // The pools every server of this process shares, sized from the
  // descriptor budget at first use.
  static ConnectionPool& Tcp();
  static ConnectionPool& Unix();

 private:
  // Shared with the slots, which may outlive the pool.
  std::shared_ptr<ConnectionPoolCounts> counts_;
};

}  // namespace gleaner::server
