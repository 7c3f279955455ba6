#include "server/history_api.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/civil_time.h"
#include "observe/verdict_json.h"
#include "server/routing.h"

namespace gleaner::server {
namespace {

using nlohmann::json;

// Two decimals are more than a sparkline can show, and keep a day of
// minutes for eight GPUs small.
double Round2(double v) { return std::round(v * 100) / 100; }

json MinuteToJson(const observe::MinuteRollup& r) {
  return {{"minute", core::Rfc3339(r.minute)},
          {"utilization_mean_pct", Round2(r.utilization_mean_pct)},
          {"utilization_max_pct", Round2(r.utilization_max_pct)},
          {"memory_used_max_bytes",
           r.memory_used_max ? json(r.memory_used_max->count()) : json(nullptr)},
          {"state", observe::GpuStateName(r.state)}};
}

json ProfileToJson(const std::string& key, const observe::HourOfWeekProfile& p) {
  json occupancy = json::array();
  double observed_s = 0;
  for (int h = 0; h < observe::kHoursPerWeek; ++h) {
    const std::optional<double> share = p.Occupancy(h);
    occupancy.push_back(share ? json(std::round(*share * 1000) / 1000) : json(nullptr));
    observed_s += p.observed_s[static_cast<size_t>(h)];
  }
  return {{"key", key},
          {"occupancy", std::move(occupancy)},
          {"observed_gpu_hours", Round2(observed_s / 3600)}};
}

}  // namespace

HttpResponse HistoryApi::Handle(const HttpRequest& request) {
  std::string query_text;
  const std::vector<std::string> seg = Segments(request.path, &query_text);
  if (seg.size() != 2) return NoSuchEndpoint(request);
  if (request.method != "GET") return WrongMethod(request);
  auto query = ParseQuery(query_text);
  if (!query.ok()) return ErrorResponse(query.status());
  if (seg[1] == "history") return History(*query);
  if (seg[1] == "profiles") return Profiles(*query);
  return NoSuchEndpoint(request);
}

HttpResponse HistoryApi::History(const std::map<std::string, std::string>& query) {
  if (auto s = OnlyKnownParameters(query, {"minutes"}); !s.ok()) return ErrorResponse(s);
  const std::string text = QueryValue(query, "minutes", "60");
  char* end = nullptr;
  const long minutes = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || minutes < 1 || minutes > kMaxHistoryMinutes) {
    return ErrorResponse(core::InvalidArgument("minutes: expected a whole number from 1 to " +
                                               std::to_string(kMaxHistoryMinutes) + ", got \"" +
                                               text + "\""));
  }
  const core::TimePoint to = clock_.Now();
  // Whole minutes: the one under way is not stored until it ends.
  const core::TimePoint from = observe::MinuteOf(to) - core::Seconds(60 * minutes);
  std::vector<observe::MinuteRollup> rollups;
  std::vector<store::GpuRecord> records;
  {
    core::MutexLock lock(store_mu_);
    auto got = store_.RollupsBetween(from, to);
    if (!got.ok()) return ErrorResponse(got.status());
    rollups = std::move(got).value();
    auto gpus = store_.Gpus();
    if (!gpus.ok()) return ErrorResponse(gpus.status());
    records = std::move(gpus).value();
  }
  std::map<std::string, const store::GpuRecord*> record_of;
  for (const store::GpuRecord& g : records) record_of[g.uuid.str()] = &g;
  // Roll-ups come by GPU, then minute: one entry per run of a GPU's minutes.
  json gpus = json::array();
  for (const observe::MinuteRollup& r : rollups) {
    if (gpus.empty() || gpus.back()["uuid"] != r.uuid.str()) {
      json gpu = {{"uuid", r.uuid.str()}, {"minutes", json::array()}};
      if (const auto it = record_of.find(r.uuid.str()); it != record_of.end()) {
        gpu["host"] = it->second->host;
        gpu["index"] = it->second->index;
        gpu["name"] = it->second->name;
        gpu["memory_total_bytes"] =
            it->second->memory_total ? json(it->second->memory_total->count()) : json(nullptr);
      }
      gpus.push_back(std::move(gpu));
    }
    gpus.back()["minutes"].push_back(MinuteToJson(r));
  }
  return Json(200, {{"from", core::Rfc3339(from)},
                    {"to", core::Rfc3339(to)},
                    {"minutes", minutes},
                    {"gpus", std::move(gpus)}});
}

HttpResponse HistoryApi::Profiles(const std::map<std::string, std::string>& query) {
  if (auto s = OnlyKnownParameters(query, {"kind"}); !s.ok()) return ErrorResponse(s);
  const std::string kind = QueryValue(query, "kind");
  if (kind != "gpu" && kind != "user" && kind != "project" && kind != "host") {
    return ErrorResponse(core::InvalidArgument(
        (kind.empty() ? std::string("kind is required") : "kind: unknown kind \"" + kind + "\"") +
        "; expected gpu, user, project or host, e.g. /v1/profiles?kind=project"));
  }
  std::map<std::string, observe::HourOfWeekProfile> profiles;
  {
    core::MutexLock lock(store_mu_);
    // The store keeps only the host's observed time (what users' and
    // projects' shares are of); how much of it was in use is the sum over
    // its GPUs.
    auto got = store_.Profiles(kind == "host" ? "gpu" : kind);
    if (!got.ok()) return ErrorResponse(got.status());
    profiles = std::move(got).value();
  }
  if (kind == "host" && !profiles.empty()) {
    observe::HourOfWeekProfile all;
    for (const auto& [uuid, gpu] : profiles) {
      for (size_t h = 0; h < all.busy_s.size(); ++h) {
        all.busy_s[h] += gpu.busy_s[h];
        all.observed_s[h] += gpu.observed_s[h];
      }
    }
    profiles = {{"all", all}};
  }
  json list = json::array();
  for (const auto& [key, profile] : profiles) list.push_back(ProfileToJson(key, profile));
  return Json(200, {{"kind", kind}, {"first_hour", "Monday 00:00 UTC"}, {"profiles", list}});
}

}  // namespace gleaner::server
