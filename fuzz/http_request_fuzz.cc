// HTTP requests as the API's server reads them off a socket (ParseRequest:
// the bytes received so far, parsed apart from the socket). What it
// promises: an error carries a status and a message; a complete request has
// lower-cased header names and a body within the limit, and reads the same
// with more bytes after it; and while bytes are still arriving, a start of
// a complete request is never an error, or a slow client would be refused.

#include <cctype>

#include "fuzz/fuzz_support.h"
#include "server/http_message.h"

namespace gleaner::fuzz {
namespace {

using server::ParsedRequest;

void Parse(std::string_view received) {
  const ParsedRequest parsed = server::ParseRequest(received);
  if (parsed.kind == ParsedRequest::Kind::kError) {
    Require(parsed.error_status >= 400 && parsed.error_status <= 599, "an error has a 4xx or 5xx");
    Require(!parsed.error.empty(), "an error says what was wrong");
    return;
  }
  if (parsed.kind != ParsedRequest::Kind::kComplete) return;
  const server::HttpRequest& request = parsed.request;
  for (const auto& [name, value] : request.headers) {
    for (const char c : name) {
      Require(std::tolower(static_cast<unsigned char>(c)) == static_cast<unsigned char>(c),
              "header names are lower-cased");
    }
  }
  Require(request.body.size() <= server::kMaxBodyBytes, "a body within the limit");

  const ParsedRequest longer = server::ParseRequest(std::string(received) + "GET / HTTP/1.1\r\n");
  Require(longer.kind == ParsedRequest::Kind::kComplete &&
              longer.request.method == request.method && longer.request.path == request.path &&
              longer.request.headers == request.headers && longer.request.body == request.body,
          "bytes after a request leave it as it was");
  for (const size_t cut : {received.size() / 2, received.size() - 1}) {
    Require(server::ParseRequest(received.substr(0, cut)).kind != ParsedRequest::Kind::kError,
            "the start of a request is not an error");
  }
}

}  // namespace
}  // namespace gleaner::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gleaner::fuzz::Parse(gleaner::fuzz::AsText(data, size));
  return 0;
}
