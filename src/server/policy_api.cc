#include "server/policy_api.h"

#include <nlohmann/json.hpp>

#include "core/civil_time.h"
#include "core/json_depth.h"
#include "observe/verdict_json.h"
#include "server/routing.h"

namespace gleaner::server {

using nlohmann::json;

namespace {

json VersionToJson(const store::PolicyVersion& p, bool with_text) {
  json doc = {
      {"version", p.version}, {"at", core::Rfc3339(p.at)}, {"author", p.author}, {"note", p.note}};
  if (with_text) doc["text"] = p.text;
  return doc;
}

// The body's fields, each a string of at most `max` bytes (the text 1 MiB
// at most, as any body), or why not; unknown fields are errors.
core::Result<std::map<std::string, json>> Fields(const std::string& body,
                                                 std::initializer_list<const char*> known) {
  std::map<std::string, json> fields;
  if (body.empty()) return fields;
  const json doc = core::ParseUntrustedJson<json>(body);
  if (!doc.is_object()) return core::InvalidArgument("the body is not a JSON object");
  for (const auto& [key, value] : doc.items()) {
    // Captured by name: clang 14 (check_thread_safety.py) cannot capture a
    // structured binding.
    if (std::find_if(known.begin(), known.end(),
                     [&name = key](const char* k) { return name == k; }) == known.end()) {
      std::string names;
      for (const char* k : known) names += (names.empty() ? "" : ", ") + std::string(k);
      return core::InvalidArgument("unknown field \"" + key.substr(0, 64) + "\"; expected " +
                                   names);
    }
    fields[key] = value;
  }
  return fields;
}

core::Result<std::string> Text(const std::map<std::string, json>& fields, const char* key,
                               size_t max) {
  const auto it = fields.find(key);
  if (it == fields.end()) return std::string();
  if (!it->second.is_string() || it->second.get<std::string>().size() > max) {
    return core::InvalidArgument(std::string(key) + ": expected text of at most " +
                                 std::to_string(max) + " bytes");
  }
  return it->second.get<std::string>();
}

// "force": true applies a policy that would lock users out.
core::Result<bool> Force(const std::map<std::string, json>& fields) {
  const auto it = fields.find("force");
  if (it == fields.end()) return false;
  if (!it->second.is_boolean()) return core::InvalidArgument("force: expected true or false");
  return it->second.get<bool>();
}

}  // namespace

core::Result<store::PolicyVersion> PolicyApi::Get(int64_t version) {
  core::MutexLock lock(store_mu_);
  return policies_.GetPolicy(version);
}

HttpResponse PolicyApi::Handle(const HttpRequest& request, const Caller& caller) {
  if (!caller.admin()) {
    return ErrorResponse(core::PermissionDenied(
        "only root reads and changes the policy (it may hold secrets, such as the alert "
        "webhook's address)"));
  }
  if (control_ == nullptr) {
    return ErrorResponse(
        core::Unavailable("this daemon keeps no policy versions: they are kept by `gleaner up`"));
  }
  std::string query;
  const std::vector<std::string> seg = Segments(request.path, &query);
  if (seg.size() == 2) {
    if (request.method == "POST") return Apply(request, caller);
    if (request.method != "GET") return WrongMethod(request);
    auto active = Get(control_->ActiveVersion());
    if (!active.ok()) return ErrorResponse(active.status());
    return Json(200, VersionToJson(*active, true));
  }
  if (seg.size() == 3 && seg[2] == "rollback") {
    if (request.method != "POST") return WrongMethod(request);
    return Rollback(request, caller);
  }
  if (seg[2] != "versions" || seg.size() > 4) return NoSuchEndpoint(request);
  if (request.method != "GET") return WrongMethod(request);
  if (seg.size() == 4) {
    auto version = ParseId(seg[3], "policy version");
    if (!version.ok()) return ErrorResponse(version.status());
    auto one = Get(*version);
    if (!one.ok()) return ErrorResponse(one.status());
    return Json(200, VersionToJson(*one, true));
  }
  auto listed = [&] {
    core::MutexLock lock(store_mu_);
    return policies_.ListPolicies(100);
  }();
  if (!listed.ok()) return ErrorResponse(listed.status());
  json doc = {{"active", control_->ActiveVersion()}, {"versions", json::array()}};
  for (const store::PolicyVersion& p : *listed) doc["versions"].push_back(VersionToJson(p, false));
  return Json(200, doc);
}

HttpResponse PolicyApi::Apply(const HttpRequest& request, const Caller& caller) {
  auto fields = Fields(request.body, {"text", "name", "note", "force"});
  if (!fields.ok()) return ErrorResponse(fields.status());
  auto force = Force(*fields);
  if (!force.ok()) return ErrorResponse(force.status());
  if (!fields->contains("text")) {
    return ErrorResponse(core::InvalidArgument("text: the policy (gleaner.toml's text) is needed"));
  }
  auto text = Text(*fields, "text", size_t{1} << 20);
  auto name = Text(*fields, "name", 256);
  auto note = Text(*fields, "note", 1000);
  for (const auto* r : {&text, &name, &note}) {
    if (!r->ok()) return ErrorResponse(r->status());
  }
  auto applied = control_->Apply(*text, name->empty() ? "the policy" : *name, caller.user, *note,
                                 "policy_applied", *force);
  if (!applied.ok()) return ErrorResponse(applied.status());
  json doc = VersionToJson(applied->version, false);
  doc["at_restart"] = applied->at_restart;
  return Json(200, doc);
}

HttpResponse PolicyApi::Rollback(const HttpRequest& request, const Caller& caller) {
  auto fields = Fields(request.body, {"version", "note", "force"});
  if (!fields.ok()) return ErrorResponse(fields.status());
  auto force = Force(*fields);
  if (!force.ok()) return ErrorResponse(force.status());
  auto note = Text(*fields, "note", 1000);
  if (!note.ok()) return ErrorResponse(note.status());
  const int64_t active = control_->ActiveVersion();
  int64_t target = active - 1;  // the one before
  if (const auto v = fields->find("version"); v != fields->end()) {
    if (!v->second.is_number_integer() || v->second.get<int64_t>() < 1) {
      return ErrorResponse(core::InvalidArgument("version: expected a version number (1 or more)"));
    }
    target = v->second.get<int64_t>();
  }
  if (target < 1) {
    return ErrorResponse(
        core::FailedPrecondition("version " + std::to_string(active) +
                                 " is the first: there is none before it to roll back to"));
  }
  auto old = Get(target);
  if (!old.ok()) {
    return ErrorResponse(old.status().code() == core::StatusCode::kNotFound
                             ? core::NotFound("no policy version " + std::to_string(target) +
                                              " (gleaner policy list shows them)")
                             : old.status());
  }
  const std::string why =
      "rollback to version " + std::to_string(target) + (note->empty() ? "" : ": " + *note);
  auto applied = control_->Apply(old->text, "version " + std::to_string(target), caller.user, why,
                                 "policy_rolled_back", *force);
  if (!applied.ok()) return ErrorResponse(applied.status());
  json doc = VersionToJson(applied->version, false);
  doc["at_restart"] = applied->at_restart;
  return Json(200, doc);
}

}  // namespace gleaner::server
