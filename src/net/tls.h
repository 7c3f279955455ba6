#pragma once

#include <memory>
#include <string>

#include "core/result.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace gleaner::net {

// Where one side of a TLS connection finds its PEM files.
struct TlsFiles {
  std::string cert{};  // this side's certificate (chain): a server's, or a client's for mTLS
  std::string key{};   // its private key
  // Whom to trust. A client checks the server's certificate against it (empty:
  // the system's CAs); a server checks the certificates clients present.
  std::string ca{};
  // A server refuses clients that present no certificate signed by `ca`.
  bool require_client_cert = false;
};

// An OpenSSL context, loaded once and shared by every connection of a
// server or a client. TLS 1.2 at least. Creating one makes the process
// ignore SIGPIPE: OpenSSL writes to sockets with write(), and a peer that
// leaves must cost an error, not the process (jobs get every signal back
// to its default before they exec).
class TlsContext {
 public:
  // Fails with what is wrong with which file: unreadable, not PEM, a key
  // that does not match the certificate, a certificate already expired.
  static core::Result<std::shared_ptr<TlsContext>> ForServer(const TlsFiles& files);
  static core::Result<std::shared_ptr<TlsContext>> ForClient(const TlsFiles& files);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* get() const { return ctx_; }

 private:
  explicit TlsContext(ssl_ctx_st* ctx) : ctx_(ctx) {}
  ssl_ctx_st* ctx_;
};

// The client context for https:// URLs given no --ca-file: the system's CAs.
core::Result<std::shared_ptr<TlsContext>> DefaultClientTls();

// OpenSSL's queued errors, oldest first, "; "-joined (and cleared).
std::string TakeOpenSslErrors();

}  // namespace gleaner::net
