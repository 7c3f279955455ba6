#include "core/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

#include "core/format.h"

namespace gleaner::core {
namespace {

std::string_view Digest(const unsigned char* digest, unsigned int size) {
  return {reinterpret_cast<const char*>(digest), size};
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  // Fails only when the library cannot allocate: nothing sane to return.
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed (out of memory?)");
  }
  return Hex(Digest(digest, size));
}

std::string HmacSha256Hex(std::string_view key, std::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
           &size) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed (out of memory?)");
  }
  return Hex(Digest(digest, size));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace gleaner::core
