#include "server/anonymous_read.h"

#include <string>
#include <vector>

#include "server/routing.h"

namespace gleaner::server {

bool AnonymousMayRead(const HttpRequest& request) {
  if (request.method != "GET") return false;
  std::string query;
  const std::vector<std::string> seg = Segments(request.path, &query);
  if (seg.size() < 2 || seg[0] != "v1") return false;
  const std::string& route = seg[1];
  if (seg.size() == 2) {
    return route == "gpus" || route == "jobs" || route == "history" || route == "profiles" ||
           route == "whoami";
  }
  if (seg.size() == 3) {
    return (route == "jobs" && ParseId(seg[2], "job").ok()) ||
           (route == "cost" && seg[2] == "report");
  }
  return false;
}

}  // namespace gleaner::server
