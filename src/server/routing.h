#pragma once

// Small pieces every API handler uses.

#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"
#include "server/http_message.h"

namespace gleaner::server {

inline HttpResponse Json(int status, const nlohmann::json& j) {
  return {status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

// Keeps the document's key order (a report reads top-down).
inline HttpResponse OrderedJson(int status, const nlohmann::ordered_json& j) {
  return {status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

// "/v1/jobs/12/cancel?x=1" -> {"v1", "jobs", "12", "cancel"}; `query` = "x=1".
std::vector<std::string> Segments(const std::string& target, std::string* query);

// "a=1&b=x%20y" -> {a: "1", b: "x y"} (percent-decoded, "+" is a space).
// InvalidArgument for a malformed escape or a key given twice.
core::Result<std::map<std::string, std::string>> ParseQuery(const std::string& query);

// InvalidArgument naming the first parameter of `query` that is not one of
// `known`, and listing those: a misspelt parameter is a mistake worth
// naming, not something to ignore.
core::Status OnlyKnownParameters(const std::map<std::string, std::string>& query,
                                 std::initializer_list<const char*> known);

// The value of `key` in `query`, or `fallback` when it is absent.
std::string QueryValue(const std::map<std::string, std::string>& query, const char* key,
                       std::string fallback = "");

// A positive decimal id from a path segment.
core::Result<int64_t> ParseId(const std::string& text, const std::string& what);

HttpResponse NoSuchEndpoint(const HttpRequest& request);
HttpResponse WrongMethod(const HttpRequest& request);

}  // namespace gleaner::server
