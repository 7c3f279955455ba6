#include "net/http_client.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "net/http_date.h"
#include "net/socket_address.h"

namespace gleaner::net {
namespace {

// How long a client waits for a starting daemon's socket: 50 x 20 ms.
constexpr int kUnixConnectRetries = 50;
constexpr auto kUnixConnectPause = std::chrono::milliseconds(20);

// No answer of gleaner's comes near this; a hostile server must not make a
// client hold more.
constexpr size_t kMaxAnswerBytes = 256 * 1024 * 1024;

std::string LowerCase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

void SetTimeouts(int fd, core::Duration timeout) {
  timeval tv{static_cast<time_t>(timeout.count() / 1'000'000),
             static_cast<suseconds_t>(timeout.count() % 1'000'000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A header's value in a response head ("name: value" lines), lower-cased.
std::string HeaderValue(const std::string& head, const std::string& name) {
  const std::string lower = LowerCase(head);
  const size_t at = lower.find("\r\n" + name + ":");
  if (at == std::string::npos) return "";
  size_t from = at + 3 + name.size();
  const size_t end = lower.find("\r\n", from);
  while (from < end && (lower[from] == ' ' || lower[from] == '\t')) ++from;
  return lower.substr(from, end - from);
}

}  // namespace

std::optional<core::TimePoint> HttpClient::server_date() const { return ParseHttpDate(date_); }

std::string Endpoint::ToString() const {
  if (!unix_path.empty()) return "unix:" + unix_path;
  return (tls ? "https://" : "http://") + FormatHostPort(host, port);
}

core::Status UseClientTls(const net::TlsFiles& tls, Endpoint* endpoint) {
  if (tls.ca.empty() && tls.cert.empty() && tls.key.empty()) return core::Status::Ok();
  if (!endpoint->tls) {
    return core::InvalidArgument(
        "--ca-file, --tls-cert and --tls-key are for https:// servers, and " +
        endpoint->ToString() + " is not one");
  }
  GLEANER_ASSIGN_OR_RETURN(endpoint->tls_context, net::TlsContext::ForClient(tls));
  return core::Status::Ok();
}

core::Result<Endpoint> ParseServerUrl(const std::string& url) {
  Endpoint e;
  if (url.rfind("unix:", 0) == 0) {
    e.unix_path = url.substr(5);
    if (e.unix_path.empty()) return core::InvalidArgument("unix: needs a socket path");
    return e;
  }
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    e.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return core::InvalidArgument(
        "\"" + url +
        "\" is not a server URL: use http://HOST:PORT, https://HOST:PORT or unix:PATH");
  }
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  GLEANER_ASSIGN_OR_RETURN(auto host_port, ParseHostPort(rest));
  e.host = host_port.first;
  e.port = host_port.second;
  return e;
}

core::Result<HttpUrl> ParseHttpUrl(const std::string& url) {
  HttpUrl out;
  std::string rest;
  if (url.starts_with("https://")) {
    out.endpoint.tls = true;
    rest = url.substr(8);
  } else if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else {
    return core::InvalidArgument("URL \"" + url + "\" must start with https:// or http://");
  }
  if (const size_t slash = rest.find_first_of("/?"); slash != std::string::npos) {
    out.target = rest.substr(slash);
    if (out.target.front() == '?') out.target.insert(0, "/");
    rest.resize(slash);
  }
  if (rest.empty() || rest == "[]") {
    return core::InvalidArgument("URL \"" + url + "\" has no host");
  }
  // host, host:port, [v6] or [v6]:port
  const size_t colon = rest.rfind(':');
  const size_t bracket = rest.rfind(']');
  const bool has_port = colon != std::string::npos &&
                        (bracket == std::string::npos ? rest.find(':') == colon : colon > bracket);
  if (!has_port) rest += out.endpoint.tls ? ":443" : ":80";
  GLEANER_ASSIGN_OR_RETURN(auto host_port, ParseHostPort(rest));
  out.endpoint.host = host_port.first;
  out.endpoint.port = host_port.second;
  return out;
}

void HttpClient::Interrupt() {
  core::MutexLock lock(live_mu_);
  interrupted_ = true;
  if (live_fd_ >= 0) shutdown(live_fd_, SHUT_RDWR);
}

void HttpClient::Drop() {
  {
    core::MutexLock lock(live_mu_);
    live_fd_ = -1;
  }
  conn_.reset();
}

core::Status HttpClient::Connect(core::Duration timeout) {
  Drop();
  if (interrupted_) return core::Unavailable("stopping");
  const std::string where = endpoint_.ToString();
  int fd = -1;
  // Linux honours SO_SNDTIMEO in connect(): a host that does not answer
  // costs `timeout`, not the kernel's minutes of SYN retries.
  if (!endpoint_.unix_path.empty()) {
    GLEANER_ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(endpoint_.unix_path));
    // A daemon that is starting has made its socket file and listens a
    // moment later (or is replacing a stale one): a client started at the
    // same time asks again for a second before it believes nobody is there.
    int error = 0;
    for (int tries = 0;; ++tries) {
      fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return core::Unavailable(std::string("socket: ") + std::strerror(errno));
      SetTimeouts(fd, timeout);
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
      error = errno;
      close(fd);
      if ((error != ECONNREFUSED && error != ENOENT) || tries >= kUnixConnectRetries) break;
      std::this_thread::sleep_for(kUnixConnectPause);
      error = 0;
    }
    if (error != 0) {
      // A socket file nobody listens on: left by a daemon that was killed.
      if (error == ECONNREFUSED) {
        if (endpoint_.server != "gleaner") {
          return core::Unavailable(endpoint_.server + " is not running at " + endpoint_.unix_path);
        }
        return core::Unavailable("no gleaner is running at " + endpoint_.unix_path +
                                 " (the socket was left by one that stopped or was killed); "
                                 "start `gleaner up`, which replaces it");
      }
      return core::Unavailable(
          "cannot reach " + endpoint_.server + " at " + endpoint_.unix_path + ": " +
          std::strerror(error) +
          (endpoint_.server == "gleaner" ? " (is `gleaner up` running?)" : ""));
    }
    conn_ = std::make_unique<net::Connection>(fd);
  } else {
    GLEANER_ASSIGN_OR_RETURN(const std::vector<TcpAddress> addresses,
                             LookupTcp(endpoint_.host, endpoint_.port));
    std::string why;
    for (const TcpAddress& addr : addresses) {
      fd = socket(addr.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) return core::Unavailable(std::string("socket: ") + std::strerror(errno));
      SetTimeouts(fd, timeout);
      if (!endpoint_.source.empty()) {
        auto from = ResolveTcp(endpoint_.source, 0);
        if (!from.ok() ||
            bind(fd, reinterpret_cast<const sockaddr*>(&from->storage), from->length) != 0) {
          close(fd);
          return core::Unavailable("cannot connect from " + endpoint_.source +
                                   (from.ok() ? ": " + std::string(std::strerror(errno)) : ""));
        }
      }
      if (connect(fd, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) == 0) break;
      why = std::strerror(errno);
      close(fd);
      fd = -1;
    }
    if (fd < 0) {
      return core::Unavailable(
          "cannot reach " + endpoint_.server + " at " + where + ": " + why +
          (endpoint_.server == "gleaner" ? " (is `gleaner up --listen` serving there?)" : ""));
    }
    if (endpoint_.tls) {
      std::shared_ptr<const net::TlsContext> tls = endpoint_.tls_context;
      if (tls == nullptr) {
        GLEANER_ASSIGN_OR_RETURN(tls, net::DefaultClientTls());
      }
      GLEANER_ASSIGN_OR_RETURN(conn_, net::Connection::ConnectTls(fd, *tls, endpoint_.host, where));
    } else {
      conn_ = std::make_unique<net::Connection>(fd);
    }
  }
  ++connections_;
  core::MutexLock lock(live_mu_);
  live_fd_ = conn_->fd();
  if (interrupted_) shutdown(live_fd_, SHUT_RDWR);  // interrupted while connecting
  return core::Status::Ok();
}

core::Result<std::pair<int, std::string>> HttpClient::Call(const std::string& method,
                                                           const std::string& target,
                                                           const std::string& body,
                                                           const std::string& token,
                                                           core::Duration timeout) {
  // A Unix socket has no host name; a TCP server may serve several.
  const std::string host =
      endpoint_.unix_path.empty() ? FormatHostPort(endpoint_.host, endpoint_.port) : "localhost";
  std::string request = method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  request += headers_;
  if (!body.empty() || method != "GET") {
    request +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  if (!keep_alive_) request += "Connection: close\r\n";
  request += "\r\n" + body;
  // A kept connection the server closed meanwhile (its idle limit) fails
  // before any answer: the request is sent again on a new one. Only then:
  // a request the server may have read is never sent twice.
  const bool reused = conn_ != nullptr;
  if (reused) SetTimeouts(conn_->fd(), timeout);
  if (!reused) GLEANER_RETURN_IF_ERROR(Connect(timeout));
  bool answered = false;
  auto result = Exchange(request, &answered);
  if (!result.ok() && reused && !answered) {
    GLEANER_RETURN_IF_ERROR(Connect(timeout));
    result = Exchange(request, &answered);
  }
  if (!result.ok()) Drop();
  return result;
}

core::Result<std::pair<int, std::string>> HttpClient::Exchange(const std::string& request,
                                                               bool* answered) {
  const std::string where = endpoint_.ToString();
  // The server may have answered early (a request too large) and closed:
  // a failed send still reads what it said.
  const core::Status sent = conn_->WriteAll(request);
  if (sent.ok()) bytes_sent_ += request.size();
  std::string response;
  char buf[16384];
  size_t head_end = std::string::npos;
  while (head_end == std::string::npos) {
    auto n = conn_->Read(buf, sizeof buf);
    if (!n.ok()) {
      if (!response.empty()) *answered = true;
      return core::Unavailable(n.status().message().starts_with("no answer")
                                   ? "no answer from " + endpoint_.server + " at " + where
                                   : n.status().message());
    }
    if (*n == 0) break;
    *answered = true;
    response.append(buf, *n);
    head_end = response.find("\r\n\r\n");
    if (head_end == std::string::npos && response.size() > 64 * 1024) {
      return core::Unavailable(where + " answered with headers over 64 KiB");
    }
  }
  int status = 0;
  if (head_end == std::string::npos ||
      std::sscanf(response.c_str(), "HTTP/1.%*d %d", &status) != 1) {
    if (!sent.ok() && response.empty()) {
      return core::Unavailable("cannot send to " + endpoint_.server + " at " + where + ": " +
                               sent.message());
    }
    return core::Unavailable("no answer from " + endpoint_.server + " at " + where);
  }
  const std::string head = response.substr(0, head_end + 2);
  date_ = HeaderValue(head, "date");
  const std::string length_text = HeaderValue(head, "content-length");
  const bool closes = !keep_alive_ ||
                      HeaderValue(head, "connection").find("close") != std::string::npos ||
                      length_text.empty();
  std::string body = response.substr(head_end + 4);
  if (!length_text.empty()) {
    const unsigned long long length = std::strtoull(length_text.c_str(), nullptr, 10);
    if (length > kMaxAnswerBytes) return core::Unavailable(where + " answered over 256 MiB");
    while (body.size() < length) {
      GLEANER_ASSIGN_OR_RETURN(size_t n, conn_->Read(buf, sizeof buf));
      if (n == 0) return core::Unavailable(where + " closed the connection mid-answer");
      body.append(buf, n);
    }
    if (body.size() > length) body.resize(length);  // nothing else may come unasked
  } else {
    // No length: the answer ends with the connection.
    while (body.size() <= kMaxAnswerBytes) {
      GLEANER_ASSIGN_OR_RETURN(size_t n, conn_->Read(buf, sizeof buf));
      if (n == 0) break;
      body.append(buf, n);
    }
  }
  bytes_received_ += head_end + 4 + body.size();
  if (closes) Drop();
  return std::pair{status, std::move(body)};
}

core::Result<std::pair<int, std::string>> HttpCall(
    const Endpoint& endpoint, const std::string& method, const std::string& target,
    const std::string& body, const std::string& token, core::Duration timeout) {
  HttpClient client(endpoint);
  client.set_keep_alive(false);
  return client.Call(method, target, body, token, timeout);
}

core::Result<int> PostJson(const std::string& url, const std::string& body,
                           core::Duration timeout) {
  GLEANER_ASSIGN_OR_RETURN(HttpUrl where, ParseHttpUrl(url));
  where.endpoint.server = "the webhook";
  auto answer = HttpCall(where.endpoint, "POST", where.target, body, "", timeout);
  if (!answer.ok()) return answer.status().WithContext(url);
  return answer->first;
}

}  // namespace gleaner::net
