#include "server/job_api.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include "store/job_json.h"

namespace gleaner::server {
namespace {

using nlohmann::json;

HttpResponse Json(int status, const json& j) {
  return {status, j.dump(-1, ' ', false, json::error_handler_t::replace)};
}

// "/v1/jobs/12/cancel" -> {"v1", "jobs", "12", "cancel"}; query dropped.
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

core::Result<sched::JobId> ParseId(const std::string& text) {
  char* end = nullptr;
  const long long id = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || id <= 0) {
    return core::InvalidArgument("\"" + text + "\" is not a job id");
  }
  return id;
}

}  // namespace

HttpResponse JobApi::Handle(const HttpRequest& req, const Caller& caller) {
  std::string query;
  const std::vector<std::string> seg = Segments(req.path, &query);
  if (seg.size() < 2 || seg[0] != "v1" || seg[1] != "jobs") {
    return ErrorResponse(core::NotFound("no such endpoint " + req.path + "; see docs/api.md"));
  }
  const auto wrong_method = [&] {
    return HttpResponse{
        405,
        ErrorResponse(core::InvalidArgument(req.method + " is not allowed on " + req.path)).body};
  };
  if (seg.size() == 2) {
    if (req.method == "POST") {
      const json body = json::parse(req.body, nullptr, false);
      if (body.is_discarded()) return ErrorResponse(core::InvalidArgument("the body is not JSON"));
      auto spec = sched::JobSpecFromJson(body);
      if (!spec.ok()) return ErrorResponse(spec.status());
      if (core::Status s = sched::ValidateJobSpec(*spec, limits_); !s.ok()) return ErrorResponse(s);
      if (spec->array) {
        return ErrorResponse(core::InvalidArgument(
            "array: not supported by this gleaner yet; submit the tasks one by one"));
      }
      auto job = jobs_.Submit(caller.user, caller.uid, *spec, clock_.Now());
      if (!job.ok()) return ErrorResponse(job.status());
      return Json(201, store::JobRecordToJson(*job));
    }
    if (req.method != "GET") return wrong_method();
    std::vector<store::JobState> states;
    if (query != "all=1") {
      states = {store::JobState::kQueued, store::JobState::kHeld, store::JobState::kRunning,
                store::JobState::kVacating};
    }
    auto jobs = jobs_.List(states);
    if (!jobs.ok()) return ErrorResponse(jobs.status());
    json list = json::array();
    for (const store::JobRecord& r : *jobs) list.push_back(store::JobRecordToJson(r));
    return Json(200, {{"jobs", list}});
  }
  auto id = ParseId(seg[2]);
  if (!id.ok()) return ErrorResponse(id.status());
  auto job = jobs_.Get(*id);
  if (!job.ok()) return ErrorResponse(job.status());
  if (seg.size() == 3) {
    if (req.method != "GET") return wrong_method();
    return Json(200, store::JobRecordToJson(*job));
  }
  if (seg.size() != 4) {
    return ErrorResponse(core::NotFound("no such endpoint " + req.path + "; see docs/api.md"));
  }
  const std::string& action = seg[3];
  if (job->uid != caller.uid && !caller.admin()) {
    return ErrorResponse(core::PermissionDenied("job " + seg[2] + " belongs to " + job->user +
                                                "; only they (or root) may " + action + " it"));
  }
  if (action == "logs") {
    if (req.method != "GET") return wrong_method();
    const bool err_stream = query.find("stream=err") != std::string::npos;
    size_t offset = 0;
    if (const size_t at = query.find("offset="); at != std::string::npos) {
      offset = static_cast<size_t>(std::strtoull(query.c_str() + at + 7, nullptr, 10));
    }
    const std::string path = log_dir_ + "/" + seg[2] + (err_stream ? ".err" : ".out");
    std::string data;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      constexpr size_t kChunk = 256 * 1024;  // a follower asks again for the rest
      if (std::fseek(f, static_cast<long>(offset), SEEK_SET) == 0) {
        data.resize(kChunk);
        data.resize(std::fread(data.data(), 1, kChunk, f));
      }
      std::fclose(f);
    }
    return Json(200, {{"data", data},
                      {"offset", offset + data.size()},
                      {"state", store::JobStateName(job->state)}});
  }
  struct Move {
    store::JobState from;
    store::JobState to;
    const char* done;  // for the reason: "cancelled by alice"
  };
  const std::map<std::string, Move> kMoves = {
      {"cancel", {job->state, store::JobState::kCancelled, "cancelled"}},
      {"hold", {store::JobState::kQueued, store::JobState::kHeld, "held"}},
      {"release", {store::JobState::kHeld, store::JobState::kQueued, "released"}},
  };
  if (auto move = kMoves.find(action); move != kMoves.end()) {
    if (req.method != "POST") return wrong_method();
    store::JobUpdate u;
    u.reason = std::string(move->second.done) + " by " + caller.user;
    auto moved = jobs_.Transition(*id, move->second.from, move->second.to, u);
    if (!moved.ok()) return ErrorResponse(moved.status());
    return Json(200, store::JobRecordToJson(*moved));
  }
  return ErrorResponse(core::NotFound("no such endpoint " + req.path + "; see docs/api.md"));
}

}  // namespace gleaner::server
