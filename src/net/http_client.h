#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/mutex.h"
#include "core/result.h"
#include "core/units.h"
#include "net/connection.h"
#include "net/tls.h"

namespace gleaner::net {

// Where a client finds gleaner's API: the Unix socket of a local `gleaner
// up` (the kernel tells it who we are), or an HTTP(S) address (a token does).
struct Endpoint {
  std::string unix_path{};  // set for a Unix socket
  std::string host{};
  uint16_t port = 0;
  bool tls = false;  // https://
  // For https://: whom to trust and what certificate to present (mTLS);
  // null: the system's CAs, no client certificate.
  std::shared_ptr<const net::TlsContext> tls_context{};
  // The numeric local address to connect from; empty: the system's choice.
  // Emulated agents each take one of 127.0.0.0/8, as real ones have their
  // own (a server limits the connections of each address).
  std::string source{};
  // What serves there, for error messages ("cannot reach slurmrestd at
  // ..."); for gleaner they also say how to start it.
  std::string server = "gleaner";

  std::string ToString() const;
};

// "http://127.0.0.1:7380", "https://coordinator:7380" (a trailing "/"
// allowed) or "unix:/path/gleaner.sock".
core::Result<Endpoint> ParseServerUrl(const std::string& url);

// An http:// or https:// URL of any server ("https://hooks.example.com/T1/B2",
// "http://[::1]:8080/hook?x=1"): where to connect (port 443 or 80 when the
// URL names none) and the request target ("/" when it names no path).
struct HttpUrl {
  Endpoint endpoint;
  std::string target = "/";
};
core::Result<HttpUrl> ParseHttpUrl(const std::string& url);

// Gives an https:// endpoint the client's TLS files (none given: the
// system's CAs); refuses them for any other.
core::Status UseClientTls(const net::TlsFiles& tls, Endpoint* endpoint);

// A client of one server that keeps its connection open between calls
// (HTTP/1.1 keep-alive) and opens it again when the server has closed it.
// One thread calls at a time; Interrupt may come from any.
class HttpClient {
 public:
  explicit HttpClient(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One request; the answer's status and body. `token`, when set, goes as
  // "Authorization: Bearer". kUnavailable when the server cannot be
  // reached or does not answer within `timeout` (for connecting, and for
  // each read or write), with what was wrong in words (TLS included).
  core::Result<std::pair<int, std::string>> Call(const std::string& method,
                                                 const std::string& target, const std::string& body,
                                                 const std::string& token = "",
                                                 core::Duration timeout = core::Seconds(30));
  // Ends a call under way (a long poll) at once, and fails every later
  // one: for stopping the thread that calls.
  void Interrupt();
  // Header lines ("Name: value\r\n" each) sent with every request, for
  // servers that authenticate otherwise (slurmrestd's X-SLURM-USER-TOKEN).
  // The caller makes sure no value holds a line break.
  void set_headers(std::string lines) { headers_ = std::move(lines); }
  // Closes the connection after each call when false ("Connection: close").
  void set_keep_alive(bool keep) { keep_alive_ = keep; }
  const Endpoint& endpoint() const { return endpoint_; }
  // The HTTP bytes sent and received so far (TLS framing not counted), and
  // the connections opened.
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }
  uint64_t connections() const { return connections_; }
  // The Date of the last answer (whole seconds), when it had a valid one:
  // what the server's clock said.
  std::optional<core::TimePoint> server_date() const;

 private:
  core::Status Connect(core::Duration timeout);
  void Drop();  // closes the connection
  // One attempt; `fresh`: whether the connection was opened for it.
  core::Result<std::pair<int, std::string>> Exchange(const std::string& request, bool* sent);

  Endpoint endpoint_;
  std::unique_ptr<net::Connection> conn_;
  bool keep_alive_ = true;
  std::string headers_;
  uint64_t bytes_sent_ = 0;
  uint64_t bytes_received_ = 0;
  uint64_t connections_ = 0;
  std::string date_;  // the last answer's Date header, as sent
  core::Mutex live_mu_;
  int live_fd_ GLEANER_GUARDED_BY(live_mu_) = -1;  // Interrupt shuts it down
  std::atomic<bool> interrupted_{false};
};

// One request on a connection of its own, closed after it.
core::Result<std::pair<int, std::string>> HttpCall(const Endpoint& endpoint,
                                                   const std::string& method,
                                                   const std::string& target,
                                                   const std::string& body,
                                                   const std::string& token = "",
                                                   core::Duration timeout = core::Seconds(30));

// POSTs `body` as JSON to `url` (ParseHttpUrl's form) on a connection of
// its own and returns the answer's status code: for webhooks. https:// checks
// the server's certificate against the system's CAs and the URL's host.
core::Result<int> PostJson(const std::string& url, const std::string& body, core::Duration timeout);

}  // namespace gleaner::net
