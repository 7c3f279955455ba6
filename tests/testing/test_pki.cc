#include "testing/test_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace gleaner::testing {
namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using Cert = std::unique_ptr<X509, decltype(&X509_free)>;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "test PKI: %s failed\n", what);
    std::abort();
  }
}

Key NewKey() {
  Key key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  Check(key != nullptr, "EVP_EC_gen");
  return key;
}

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  Check(ext != nullptr, "X509V3_EXT_conf_nid");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate for `key` named `cn`, signed by `issuer` (itself when
// null), valid from `from_s` to `to_s` seconds from now.
Cert Issue(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key, bool ca,
           const char* alt_names, long from_s, long to_s) {
  static long serial = 1;
  Cert cert(X509_new(), &X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), from_s);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), to_s);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  AddExtension(cert.get(), signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  if (ca) AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  if (alt_names != nullptr) AddExtension(cert.get(), signer, NID_subject_alt_name, alt_names);
  Check(X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) > 0,
        "X509_sign");
  return cert;
}

void Write(const std::string& path, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  Check(f != nullptr && PEM_write_X509(f, cert) == 1, "writing a certificate");
  std::fclose(f);
}

void Write(const std::string& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  Check(f != nullptr && PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "writing a key");
  std::fclose(f);
}

}  // namespace

TestPki MakeTestPki(const std::string& dir) {
  constexpr long kDay = 24 * 3600;
  TestPki p;
  p.ca = dir + "/ca.pem";
  p.server_cert = dir + "/server.pem";
  p.server_key = dir + "/server.key";
  p.client_cert = dir + "/client.pem";
  p.client_key = dir + "/client.key";
  p.expired_cert = dir + "/expired.pem";
  p.expired_key = dir + "/expired.key";
  p.stranger_cert = dir + "/stranger.pem";
  p.stranger_key = dir + "/stranger.key";

  const Key ca_key = NewKey();
  const Cert ca =
      Issue(ca_key.get(), "gleaner test CA", nullptr, nullptr, true, nullptr, -60, kDay);
  Write(p.ca, ca.get());
  const char* here = "IP:127.0.0.1,IP:::1,DNS:localhost";
  const Key server_key = NewKey();
  Write(
      p.server_cert,
      Issue(server_key.get(), "coordinator", ca.get(), ca_key.get(), false, here, -60, kDay).get());
  Write(p.server_key, server_key.get());
  const Key client_key = NewKey();
  Write(p.client_cert,
        Issue(client_key.get(), "gpu-node-07", ca.get(), ca_key.get(), false, nullptr, -60, kDay)
            .get());
  Write(p.client_key, client_key.get());
  const Key expired_key = NewKey();
  Write(p.expired_cert, Issue(expired_key.get(), "coordinator", ca.get(), ca_key.get(), false, here,
                              -2 * kDay, -3600)
                            .get());
  Write(p.expired_key, expired_key.get());
  const Key other_ca_key = NewKey();
  const Cert other_ca =
      Issue(other_ca_key.get(), "someone else's CA", nullptr, nullptr, true, nullptr, -60, kDay);
  const Key stranger_key = NewKey();
  Write(p.stranger_cert, Issue(stranger_key.get(), "gpu-node-07", other_ca.get(),
                               other_ca_key.get(), false, here, -60, kDay)
                             .get());
  Write(p.stranger_key, stranger_key.get());
  return p;
}

}  // namespace gleaner::testing
