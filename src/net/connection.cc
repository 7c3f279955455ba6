#include "net/connection.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gleaner::net {
namespace {

bool IsIpAddress(const std::string& host) {
  return host.find(':') != std::string::npos ||
         host.find_first_not_of("0123456789.") == std::string::npos;
}

// Why a client's TLS connection to `where` failed, in words a user can act
// on; OpenSSL's own words last.
std::string ClientFailure(SSL* ssl, const std::string& where, int saved_errno) {
  switch (const long verify = SSL_get_verify_result(ssl); verify) {
    case X509_V_OK:
      break;
    case X509_V_ERR_CERT_HAS_EXPIRED:
      ERR_clear_error();
      return "the certificate of " + where + " has expired: renew it on the server";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      ERR_clear_error();
      return "the certificate of " + where + " is not valid yet: check both hosts' clocks";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      ERR_clear_error();
      return "the certificate of " + where +
             " was not issued for that name or address: connect by one it names";
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
      ERR_clear_error();
      return "the certificate of " + where +
             " is signed by a CA this client does not trust: pass that CA's certificate with "
             "--ca-file";
    default:
      ERR_clear_error();
      return "the certificate of " + where +
             " is not valid: " + X509_verify_cert_error_string(verify);
  }
  switch (ERR_GET_REASON(ERR_peek_last_error())) {
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
      ERR_clear_error();
      return where + " speaks plain HTTP, not TLS: use http:// for it";
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      ERR_clear_error();
      return where + " requires a client certificate: pass --tls-cert and --tls-key";
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
      ERR_clear_error();
      return where +
             " does not trust this client's certificate (its CA is not in the "
             "server's --ca-file)";
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
      ERR_clear_error();
      return where + " refused this client's certificate: it has expired; renew it";
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
      ERR_clear_error();
      return where + " refused this client's certificate";
    default:
      break;
  }
  if (ERR_peek_error() == 0) {
    if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK) return "no answer from " + where;
    if (saved_errno != 0) return "TLS with " + where + ": " + std::strerror(saved_errno);
    return where + " closed the connection during the TLS handshake (is it an https:// port?)";
  }
  return "TLS with " + where + " failed: " + TakeOpenSslErrors();
}

}  // namespace

std::unique_ptr<Connection> Connection::AcceptTls(int fd, const TlsContext& tls) {
  SSL* ssl = SSL_new(tls.get());
  if (ssl == nullptr) {
    ERR_clear_error();
    close(fd);
    return nullptr;
  }
  SSL_set_fd(ssl, fd);
  SSL_set_accept_state(ssl);
  // Answers are written as the socket takes them, from the same buffer
  // that may have moved (it is the tail of a string).
  SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return std::unique_ptr<Connection>(new Connection(fd, ssl));
}

core::Result<std::unique_ptr<Connection>> Connection::ConnectTls(int fd, const TlsContext& tls,
                                                                 const std::string& host,
                                                                 const std::string& where) {
  SSL* ssl = SSL_new(tls.get());
  if (ssl == nullptr) {
    close(fd);
    return core::Internal("TLS: " + TakeOpenSslErrors());
  }
  std::unique_ptr<Connection> c(new Connection(fd, ssl));
  SSL_set_fd(ssl, fd);
  if (IsIpAddress(host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    // SNI; SSL_set_tlsext_host_name is this call behind a C cast.
    SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
             const_cast<char*>(host.c_str()));
    SSL_set1_host(ssl, host.c_str());
  }
  c->where_ = where;
  errno = 0;
  if (SSL_connect(ssl) != 1) {
    c->failed_ = true;
    return core::Unavailable(ClientFailure(ssl, where, errno));
  }
  return c;
}

Connection::~Connection() {
  if (ssl_ != nullptr) {
    // Best effort, never waiting for the peer's answer.
    if (!failed_ && SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
    SSL_free(ssl_);
    ERR_clear_error();
  }
  if (fd_ >= 0) close(fd_);
}

Connection::Got Connection::ReadAvailable(std::string* into, size_t limit) {
  char buf[16384];
  const size_t start = into->size();
  wants_write_ = false;
  while (into->size() - start < limit) {
    if (ssl_ == nullptr) {
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        into->append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) return Got::kEnded;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
      return Got::kFailed;
    }
    const int n = SSL_read(ssl_, buf, sizeof buf);
    if (n > 0) {
      into->append(buf, static_cast<size_t>(n));
      continue;
    }
    switch (SSL_get_error(ssl_, n)) {
      case SSL_ERROR_WANT_READ:
        return into->size() > start ? Got::kData : Got::kWouldBlock;
      case SSL_ERROR_WANT_WRITE:
        wants_write_ = true;
        return into->size() > start ? Got::kData : Got::kWouldBlock;
      case SSL_ERROR_ZERO_RETURN:
        return Got::kEnded;
      default:
        return Failed();
    }
  }
  return into->size() > start ? Got::kData : Got::kWouldBlock;
}

Connection::Got Connection::Failed() {
  failed_ = true;
  plain_http_ = ERR_GET_REASON(ERR_peek_last_error()) == SSL_R_HTTP_REQUEST;
  ERR_clear_error();
  return Got::kFailed;
}

bool Connection::handshaking() const { return ssl_ != nullptr && !SSL_is_init_finished(ssl_); }

Connection::Got Connection::Handshake() {
  wants_write_ = false;
  if (ssl_ == nullptr) return Got::kData;
  const int n = SSL_do_handshake(ssl_);
  if (n == 1) return Got::kData;
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_WANT_READ:
      return Got::kWouldBlock;
    case SSL_ERROR_WANT_WRITE:
      wants_write_ = true;
      return Got::kWouldBlock;
    default:
      return Failed();
  }
}

core::Result<size_t> Connection::WriteAvailable(std::string_view data) {
  wants_read_ = false;
  if (data.empty()) return size_t{0};
  if (ssl_ == nullptr) {
    while (true) {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
      return core::Unavailable(std::string("send: ") + std::strerror(errno));
    }
  }
  const int n =
      SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 30)));
  if (n > 0) return static_cast<size_t>(n);
  switch (SSL_get_error(ssl_, n)) {
    case SSL_ERROR_WANT_WRITE:
      return size_t{0};
    case SSL_ERROR_WANT_READ:
      wants_read_ = true;
      return size_t{0};
    default: {
      failed_ = true;
      const int saved = errno;
      return core::Unavailable("send: " + (ERR_peek_error() != 0
                                               ? TakeOpenSslErrors()
                                               : std::string(std::strerror(saved))));
    }
  }
}

core::Result<size_t> Connection::Read(char* buf, size_t size) {
  while (true) {
    if (ssl_ == nullptr) {
      const ssize_t n = recv(fd_, buf, size, 0);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EINTR) continue;
      return core::Unavailable(errno == EAGAIN || errno == EWOULDBLOCK
                                   ? std::string("no answer in time")
                                   : std::string(std::strerror(errno)));
    }
    errno = 0;
    const int n = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    if (n > 0) return static_cast<size_t>(n);
    const int error = SSL_get_error(ssl_, n);
    if (error == SSL_ERROR_ZERO_RETURN) return size_t{0};
    // Only TLS's own messages came (a session ticket): read on.
    if ((error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) && errno == 0) continue;
    failed_ = true;
    // TLS 1.3 clients hear that the server refused their certificate only
    // here, after their handshake finished.
    return core::Unavailable(ClientFailure(ssl_, where_.empty() ? "the peer" : where_, errno));
  }
}

core::Status Connection::WriteAll(std::string_view data) {
  size_t sent = 0;
  while (sent < data.size()) {
    if (ssl_ == nullptr) {
      const ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return core::Unavailable(std::string("send: ") + std::strerror(errno));
      sent += static_cast<size_t>(n);
      continue;
    }
    const int n = SSL_write(ssl_, data.data() + sent,
                            static_cast<int>(std::min<size_t>(data.size() - sent, 1 << 30)));
    if (n <= 0) {
      failed_ = true;
      const int saved = errno;
      return core::Unavailable("send: " + (ERR_peek_error() != 0
                                               ? TakeOpenSslErrors()
                                               : std::string(std::strerror(saved))));
    }
    sent += static_cast<size_t>(n);
  }
  return core::Status::Ok();
}

}  // namespace gleaner::net
