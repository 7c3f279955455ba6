#include "server/job_api.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/json_depth.h"
#include "core/private_file.h"
#include "server/job_list_query.h"
#include "server/routing.h"
#include "store/job_json.h"

namespace gleaner::server {

using nlohmann::json;

namespace {

// A job as `caller` may see it: another user's environment (it may hold
// credentials) is left out unless the caller is an admin.
json Visible(const store::JobRecord& r, const Caller& caller) {
  json doc = store::JobRecordToJson(r);
  if (r.uid != caller.uid && !caller.admin()) doc["spec"].erase("env");
  return doc;
}

}  // namespace

core::Status NotForProject(const Caller& caller, const std::string& project) {
  std::string mine;
  for (const std::string& p : caller.projects) mine += (mine.empty() ? "" : ", ") + p;
  return core::PermissionDenied(
      "this token acts only for project(s) " + mine + ", not for " +
      (project.empty() ? std::string("jobs of no project") : "project " + project));
}

HttpResponse JobApi::Submit(const HttpRequest& req, const Caller& caller) {
  const json body = core::ParseUntrustedJson<json>(req.body);
  if (body.is_discarded()) return ErrorResponse(core::InvalidArgument("the body is not JSON"));
  auto spec = sched::JobSpecFromJson(body);
  if (!spec.ok()) return ErrorResponse(spec.status());
  if (spec->pty && !runs_sessions_) {
    return ErrorResponse(core::InvalidArgument(
        "this gleaner runs no interactive sessions: its jobs run on other hosts; run `gleaner "
        "run` against a `gleaner up` (docs/jobs.md, interactive sessions)"));
  }
  std::string approval;
  if (const auto policy = policy_ != nullptr ? policy_->Get() : nullptr) {
    auto admitted = policy->Admit(caller, &*spec);
    if (!admitted.ok()) return ErrorResponse(admitted.status());
    approval = std::move(admitted).value();
  }
  if (!caller.ActsFor(spec->project)) return ErrorResponse(NotForProject(caller, spec->project));
  if (core::Status s = sched::ValidateJobSpec(*spec, limits_); !s.ok()) return ErrorResponse(s);
  // Each task keeps its own copy of the spec: a huge spec times a huge
  // array would fill the disk.
  constexpr uint64_t kMaxArrayBytes = uint64_t{256} << 20;
  if (const uint64_t bytes = req.body.size() * static_cast<uint64_t>(store::TaskCount(*spec));
      bytes > kMaxArrayBytes) {
    return ErrorResponse(
        core::InvalidArgument("array: " + std::to_string(store::TaskCount(*spec)) + " tasks of a " +
                              std::to_string(req.body.size() / 1024) + " KiB spec would store " +
                              std::to_string(bytes >> 20) +
                              " MiB; at most 256 MiB: pass large data in files, or "
                              "split the array"));
  }
  auto saved = batcher_.Submit({caller.user, caller.uid, *spec, approval});
  if (!saved.ok()) return ErrorResponse(saved.status());
  if (!approval.empty()) {
    approvals_.Requested(saved->front(), saved->size());
  } else if (queue_changed_) {
    queue_changed_();
  }
  json doc = store::JobRecordToJson(saved->front());
  // An array answers with its first task and how many there are, not a
  // record per task (a sweep may have 100,000).
  if (spec->array) doc["array_tasks"] = saved->size();
  return Json(201, doc);
}

HttpResponse JobApi::CancelArray(const store::JobRecord& task, const store::JobUpdate& update) {
  if (!task.array_id) {
    return ErrorResponse(
        core::InvalidArgument("job " + std::to_string(task.id) + " is not a task of an array"));
  }
  auto cancelled = jobs_.CancelArray(*task.array_id, update.reason, update.actor);
  if (!cancelled.ok()) return ErrorResponse(cancelled.status());
  return Json(200, {{"array_id", *task.array_id}, {"cancelled", *cancelled}});
}

HttpResponse JobApi::List(const std::string& query, const Caller& caller) {
  auto params = ParseQuery(query);
  if (!params.ok()) return ErrorResponse(params.status());
  auto q = ParseJobListQuery(*params);
  if (!q.ok()) return ErrorResponse(q.status());
  // One more than the page, to know whether another follows.
  const int64_t page = q->limit;
  ++q->limit;
  core::Result<std::vector<store::JobRecord>> jobs = [&] {
    core::MutexLock lock(store_mu_);
    return jobs_.Find(*q);
  }();
  if (!jobs.ok()) return ErrorResponse(jobs.status());
  json doc = {{"jobs", json::array()}};
  const bool more = static_cast<int64_t>(jobs->size()) > page;
  if (more) jobs->pop_back();
  for (const store::JobRecord& r : *jobs) doc["jobs"].push_back(Visible(r, caller));
  if (more) doc["next"] = jobs->back().id;
  return Json(200, doc);
}

HttpResponse JobApi::Logs(const store::JobRecord& job, const std::string& query) {
  auto params = ParseQuery(query);
  if (!params.ok()) return ErrorResponse(params.status());
  if (auto s = OnlyKnownParameters(*params, {"stream", "offset"}); !s.ok()) return ErrorResponse(s);
  const std::string stream = QueryValue(*params, "stream", "out");
  if (stream != "out" && stream != "err") {
    return ErrorResponse(core::InvalidArgument("stream: expected out or err"));
  }
  size_t offset = 0;
  if (const std::string text = QueryValue(*params, "offset", "0"); text != "0") {
    auto parsed = ParseId(text, "log offset");
    if (!parsed.ok()) return ErrorResponse(parsed.status());
    offset = static_cast<size_t>(*parsed);
  }
  if (remote_logs_) return remote_logs_(job, stream == "err", offset);
  const std::string path = log_dir_ + "/" + std::to_string(job.id) + "." + stream;
  auto data = core::ReadLogChunk(path, offset, 256 * 1024);
  if (!data.ok()) return ErrorResponse(data.status());
  return Json(200, {{"data", *data},
                    {"offset", offset + data->size()},
                    {"state", store::JobStateName(job.state)}});
}

HttpResponse JobApi::Handle(const HttpRequest& req, const Caller& caller) {
  std::string query;
  const std::vector<std::string> seg = Segments(req.path, &query);
  if (seg.size() < 2 || seg[0] != "v1" || seg[1] != "jobs") {
    return NoSuchEndpoint(req);
  }
  if (seg.size() == 2) {
    if (req.method == "POST") return Submit(req, caller);
    if (req.method != "GET") return WrongMethod(req);
    return List(query, caller);
  }
  auto id = ParseId(seg[2], "job");
  if (!id.ok()) return ErrorResponse(id.status());
  // The store is held for each of its calls, never for files or encoding.
  core::Result<store::JobRecord> job = [&] {
    core::MutexLock lock(store_mu_);
    return jobs_.Get(*id);
  }();
  if (!job.ok()) return ErrorResponse(job.status());
  if (seg.size() == 3) {
    if (req.method != "GET") return WrongMethod(req);
    return Json(200, Visible(*job, caller));
  }
  if (seg.size() != 4) {
    return NoSuchEndpoint(req);
  }
  const std::string& action = seg[3];
  // The project's approvers decide, not the job's owner.
  if (action == "approve" || action == "deny") {
    return approvals_.Decide(req, caller, *job, action == "approve");
  }
  if (action != "logs" && action != "events" && !caller.ActsFor(job->spec.project)) {
    return ErrorResponse(NotForProject(caller, job->spec.project));
  }
  if (job->uid != caller.uid && !caller.admin()) {
    return ErrorResponse(core::PermissionDenied("job " + seg[2] + " belongs to " + job->user +
                                                "; only they (or root) may " + action + " it"));
  }
  if (action == "logs") {
    if (req.method != "GET") return WrongMethod(req);
    return Logs(*job, query);
  }
  if (action == "events") {
    if (req.method != "GET") return WrongMethod(req);
    return events_.JobEvents(job->id, query);
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
    if (req.method != "POST") return WrongMethod(req);
    store::JobUpdate u;
    u.actor = caller.user;
    u.at = clock_.Now();
    u.reason = std::string(move->second.done) + " by " + caller.user;
    HttpResponse answer = [&] {
      core::MutexLock lock(store_mu_);
      if (action == "cancel" && query == "array=1") return CancelArray(*job, u);
      auto moved = jobs_.Transition(*id, move->second.from, move->second.to, u);
      if (!moved.ok()) return ErrorResponse(moved.status());
      return Json(200, store::JobRecordToJson(*moved));
    }();
    if (answer.status == 200 && queue_changed_) queue_changed_();
    return answer;
  }
  return NoSuchEndpoint(req);
}

}  // namespace gleaner::server
