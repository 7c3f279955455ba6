#include "server/routing.h"

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

core::Result<int64_t> ParseId(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const long long id = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || id <= 0) {
    return core::InvalidArgument("\"" + text + "\" is not a " + what + " id");
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
