#include "server/routing.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace gleaner::server {

std::vector<std::string> Segments(const std::string& target, std::string* query) {
  std::string path = target;
  if (const size_t q = path.find('?'); q != std::string::npos) {
    *query = path.substr(q + 1);
    path.resize(q);
  }
  std::vector<std::string> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

namespace {

core::Result<std::string> PercentDecode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      if (i + 2 >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
        return core::InvalidArgument("bad %-escape in the query: \"" + text + "\"");
      }
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    }
  }
  return out;
}

}  // namespace

core::Result<std::map<std::string, std::string>> ParseQuery(const std::string& query) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string pair = query.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    GLEANER_ASSIGN_OR_RETURN(std::string key, PercentDecode(pair.substr(0, eq)));
    GLEANER_ASSIGN_OR_RETURN(
        std::string value,
        PercentDecode(eq == std::string::npos ? std::string() : pair.substr(eq + 1)));
    if (!out.emplace(std::move(key), std::move(value)).second) {
      return core::InvalidArgument("query parameter \"" + pair.substr(0, eq) + "\" given twice");
    }
  }
  return out;
}

core::Status OnlyKnownParameters(const std::map<std::string, std::string>& query,
                                 std::initializer_list<const char*> known) {
  for (const auto& [key, value] : query) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      return core::InvalidArgument("unknown query parameter \"" + key + "\"; expected " + list);
    }
  }
  return core::Status::Ok();
}

std::string QueryValue(const std::map<std::string, std::string>& query, const char* key,
                       std::string fallback) {
  const auto it = query.find(key);
  return it == query.end() ? fallback : it->second;
}

core::Result<int64_t> ParseId(const std::string& text, const std::string& what) {
  // Digits only, no sign or leading zero, within int64: "+5", "05" and
  // 2^63 name no id, and answering for them would alias real ones.
  const bool digits = !text.empty() && text.size() <= 19 &&
                      text.find_first_not_of("0123456789") == std::string::npos && text[0] != '0';
  errno = 0;
  const long long id = digits ? std::strtoll(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno != 0 || id <= 0) {
    return core::InvalidArgument("\"" + text.substr(0, 64) + "\" is not a " + what +
                                 " id (a positive whole number)");
  }
  return id;
}

HttpResponse NoSuchEndpoint(const HttpRequest& request) {
  return ErrorResponse(core::NotFound("no such endpoint " + request.path + "; see docs/api.md"));
}

HttpResponse WrongMethod(const HttpRequest& request) {
  return {405, ErrorResponse(
                   core::InvalidArgument(request.method + " is not allowed on " + request.path))
                   .body};
}

}  // namespace gleaner::server
