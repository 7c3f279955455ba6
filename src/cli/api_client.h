#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "core/result.h"
#include "net/http_client.h"
#include "net/tls.h"

namespace gleaner::cli {

// How a client reaches gleaner's API: --server URL (with --token) when
// given, else the Unix socket of a `gleaner up` in the data directory.
struct ApiTarget {
  std::string server;  // --server / $GLEANER_SERVER
  std::string token;   // --token / $GLEANER_TOKEN
  std::string data_dir;
  net::TlsFiles tls;  // --ca-file, --tls-cert, --tls-key, for an https:// server
};

// The endpoint to call; nullopt when no server was named and no local
// `gleaner up` is serving (its socket is absent).
core::Result<std::optional<net::Endpoint>> FindApi(const ApiTarget& target);

// The endpoint, for commands that need a running daemon: kUnavailable,
// saying how to reach one, where there is none.
core::Result<net::Endpoint> RunningApi(const ApiTarget& target);

// `text` as a query value: bytes other than letters, digits and ._- escaped.
std::string QueryEscape(const std::string& text);

// Calls the API and prints the answer: `text` of the JSON, or the JSON
// itself with `json_out`; errors go to `err` with the exit code they mean.
int CallApi(const net::Endpoint& endpoint, const std::string& token, const std::string& method,
            const std::string& path, const std::string& body, bool json_out,
            const std::function<std::string(const nlohmann::json&)>& text, std::ostream& out,
            std::ostream& err);

// Prints "gleaner: <message>" and returns the exit code for the status.
int Fail(std::ostream& err, const core::Status& s);

}  // namespace gleaner::cli
