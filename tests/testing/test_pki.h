#pragma once

#include <string>

namespace gleaner::testing {

// A small certificate authority in a directory, for TLS tests: PEM files
// made with OpenSSL's API (no `openssl` command needed). Keys are P-256.
struct TestPki {
  std::string ca;           // the CA's certificate: what --ca-file names
  std::string server_cert;  // for 127.0.0.1, ::1 and localhost, signed by the CA
  std::string server_key;
  std::string client_cert;  // a client (an agent: CN gpu-node-07), signed by the CA
  std::string client_key;
  std::string expired_cert;  // like server_cert, but its time ran out an hour ago
  std::string expired_key;
  std::string stranger_cert;  // a client signed by a CA of its own, not `ca`
  std::string stranger_key;
};

// Writes the files into `dir` (which must exist). Aborts the test binary
// on an OpenSSL failure: without certificates no TLS test means anything.
TestPki MakeTestPki(const std::string& dir);

}  // namespace gleaner::testing
