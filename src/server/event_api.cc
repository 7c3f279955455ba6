#include "server/event_api.h"

#include <charconv>

#include "core/civil_time.h"
#include "server/routing.h"

namespace gleaner::server {

using nlohmann::json;

namespace {

constexpr int64_t kDefaultEventPage = 200;
constexpr int64_t kMaxEventPage = 1000;

}  // namespace

nlohmann::json EventToJson(const store::EventRecord& e) {
  json gpus = json::array();
  for (const core::GpuUuid& g : e.gpus) gpus.push_back(g.str());
  return {{"id", e.id},     {"at", core::Rfc3339(e.at)},
          {"kind", e.kind}, {"job", e.job ? json(*e.job) : json(nullptr)},
          {"user", e.user}, {"actor", e.actor},
          {"gpus", gpus},   {"detail", e.detail}};
}

core::Result<core::Duration> ParseAge(const std::string& text) {
  int64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(text.data(), end, n);
  const std::string unit(rest, end);
  const std::map<std::string, int64_t> seconds = {
      {"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
  const auto scale = seconds.find(unit);
  constexpr int64_t kMaxDays = 36500;
  if (error != std::errc() || n < 0 || scale == seconds.end() ||
      n > kMaxDays * 86400 / scale->second) {
    return core::InvalidArgument("since: \"" + text.substr(0, 32) +
                                 "\" is not an age; expected one such as 90s, 30m, 24h or 7d");
  }
  return core::Duration(core::Seconds(n * scale->second));
}

HttpResponse EventApi::Page(store::EventQuery query) {
  const int64_t page = query.limit;
  ++query.limit;  // one more, to know whether another page follows
  auto events = [&] {
    core::MutexLock lock(store_mu_);
    return events_.Events(query);
  }();
  if (!events.ok()) return ErrorResponse(events.status());
  const bool more = static_cast<int64_t>(events->size()) > page;
  if (more) events->pop_back();
  json doc = {{"events", json::array()}};
  for (const store::EventRecord& e : *events) doc["events"].push_back(EventToJson(e));
  if (more) doc["next"] = events->back().id;
  return Json(200, doc);
}

HttpResponse EventApi::List(const HttpRequest& request, const Caller& caller) {
  if (request.method != "GET") return WrongMethod(request);
  std::string query_text;
  Segments(request.path, &query_text);
  auto params = ParseQuery(query_text);
  if (!params.ok()) return ErrorResponse(params.status());
  if (auto s = OnlyKnownParameters(*params, {"since", "user", "kind", "job", "after", "limit"});
      !s.ok()) {
    return ErrorResponse(s);
  }
  store::EventQuery q;
  q.user = QueryValue(*params, "user");
  if (!caller.admin()) {
    if (caller.anonymous) {
      return ErrorResponse(core::Unauthenticated("the history needs a token"));
    }
    if (!q.user.empty() && q.user != caller.user) {
      return ErrorResponse(core::PermissionDenied("only root reads other users' events; " +
                                                  caller.user + " may read their own"));
    }
    q.user = caller.user;
  }
  q.kind = QueryValue(*params, "kind");
  if (params->contains("since")) {
    auto age = ParseAge(QueryValue(*params, "since"));
    if (!age.ok()) return ErrorResponse(age.status());
    q.since = clock_.Now() - *age;
  }
  if (params->contains("job")) {
    auto job = ParseId(QueryValue(*params, "job"), "job");
    if (!job.ok()) return ErrorResponse(job.status());
    q.job = *job;
  }
  if (params->contains("after")) {
    auto after = ParseId(QueryValue(*params, "after"), "event");
    if (!after.ok()) return ErrorResponse(after.status());
    q.after = *after;
  }
  q.limit = kDefaultEventPage;
  if (params->contains("limit")) {
    auto limit = ParseId(QueryValue(*params, "limit"), "page size");
    if (!limit.ok() || *limit > kMaxEventPage) {
      return ErrorResponse(core::InvalidArgument("limit: expected a whole number from 1 to " +
                                                 std::to_string(kMaxEventPage)));
    }
    q.limit = *limit;
  }
  return Page(std::move(q));
}

HttpResponse EventApi::JobEvents(sched::JobId job, const std::string& query_text) {
  auto params = ParseQuery(query_text);
  if (!params.ok()) return ErrorResponse(params.status());
  if (auto s = OnlyKnownParameters(*params, {"after"}); !s.ok()) return ErrorResponse(s);
  store::EventQuery q;
  q.job = job;
  q.limit = kMaxEventPage;
  if (params->contains("after")) {
    auto after = ParseId(QueryValue(*params, "after"), "event");
    if (!after.ok()) return ErrorResponse(after.status());
    q.after = *after;
  }
  return Page(std::move(q));
}

}  // namespace gleaner::server
