#include "net/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509err.h>
#include <signal.h>

#include <mutex>

#include "core/mutex.h"

namespace gleaner::net {

std::string TakeOpenSslErrors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no detail from OpenSSL" : out;
}

namespace {

std::string NotAfter(const X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return "?";
  ASN1_TIME_print(bio, X509_get0_notAfter(cert));
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(size));
  BIO_free(bio);
  return out;
}

core::Status Failed(const std::string& what) {
  return core::InvalidArgument(what + " (" + TakeOpenSslErrors() + ")");
}

core::Result<SSL_CTX*> NewContext(bool server) {
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) return core::Internal("cannot set up TLS: " + TakeOpenSslErrors());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // A peer that closes without TLS's goodbye has simply ended.
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  return ctx;
}

// This side's certificate and key, checked to match and to be in force.
core::Status UseCertificate(SSL_CTX* ctx, const TlsFiles& files, const std::string& flag) {
  if (SSL_CTX_use_certificate_chain_file(ctx, files.cert.c_str()) != 1) {
    return Failed("cannot read a PEM certificate from " + files.cert + " (" + flag + ")");
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH) {
      return Failed("cannot read a PEM private key from " + files.key + " (--tls-key)");
    }
  }
  if (ERR_peek_error() != 0 || SSL_CTX_check_private_key(ctx) != 1) {
    return Failed("the key in " + files.key + " does not belong to the certificate in " +
                  files.cert);
  }
  const X509* cert = SSL_CTX_get0_certificate(ctx);
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
    return core::FailedPrecondition("the certificate in " + files.cert + " expired on " +
                                    NotAfter(cert) + "; renew it");
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<std::shared_ptr<TlsContext>> TlsContext::ForServer(const TlsFiles& files) {
  if (files.cert.empty() || files.key.empty()) {
    return core::InvalidArgument("TLS needs both --tls-cert and --tls-key");
  }
  if (files.require_client_cert && files.ca.empty()) {
    return core::InvalidArgument(
        "requiring client certificates needs --ca-file: the CA that signs them");
  }
  GLEANER_ASSIGN_OR_RETURN(SSL_CTX * ctx, NewContext(true));
  std::shared_ptr<TlsContext> out(new TlsContext(ctx));
  GLEANER_RETURN_IF_ERROR(UseCertificate(ctx, files, "--tls-cert"));
  if (!files.ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, files.ca.c_str(), nullptr) != 1) {
      return Failed("cannot read PEM CA certificates from " + files.ca + " (--ca-file)");
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(files.ca.c_str());
    if (names != nullptr) SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(
        ctx, SSL_VERIFY_PEER | (files.require_client_cert ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0),
        nullptr);
  }
  return out;
}

core::Result<std::shared_ptr<TlsContext>> TlsContext::ForClient(const TlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    return core::InvalidArgument("a client certificate needs both --tls-cert and --tls-key");
  }
  GLEANER_ASSIGN_OR_RETURN(SSL_CTX * ctx, NewContext(false));
  std::shared_ptr<TlsContext> out(new TlsContext(ctx));
  if (files.ca.empty()) {
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
      return Failed("cannot load the system's CA certificates; pass --ca-file");
    }
  } else if (SSL_CTX_load_verify_locations(ctx, files.ca.c_str(), nullptr) != 1) {
    return Failed("cannot read PEM CA certificates from " + files.ca + " (--ca-file)");
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  if (!files.cert.empty()) GLEANER_RETURN_IF_ERROR(UseCertificate(ctx, files, "--tls-cert"));
  return out;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

core::Result<std::shared_ptr<TlsContext>> DefaultClientTls() {
  static core::Mutex mu;
  static std::shared_ptr<TlsContext> shared GLEANER_GUARDED_BY(mu);
  core::MutexLock lock(mu);
  if (shared == nullptr) {
    GLEANER_ASSIGN_OR_RETURN(shared, TlsContext::ForClient({}));
  }
  return shared;
}

}  // namespace gleaner::net
