#include "cluster/agent_protocol.h"

namespace gleaner::cluster {

using nlohmann::json;

namespace {

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

template <typename T>
std::optional<T> Opt(const json& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<T>();
}

// Values a JSON number carries, rounded to what a reading means: a tenth
// of a percent, watt or degree keeps reports small.
json Rounded(const std::optional<double>& v) {
  return v ? json(std::round(*v * 10) / 10) : json(nullptr);
}

json AttemptToJson(const JobAttempt& a) { return json::array({a.job, a.attempt}); }
JobAttempt AttemptFromJson(const json& j) {
  return {j.at(0).get<sched::JobId>(), j.at(1).get<int>()};
}

json GpuStatusToJson(const GpuStatus& g) {
  return json::array({static_cast<int>(g.state),
                      (g.lendable_free ? 1 : 0) | (g.lendable_placed ? 2 : 0),
                      Rounded(g.utilization_pct), OrNull(g.memory_used_mib), Rounded(g.power_w),
                      Rounded(g.temperature_c)});
}

GpuStatus GpuStatusFromJson(const json& j) {
  GpuStatus g;
  const int state = j.at(0).get<int>();
  if (state < 0 || state > static_cast<int>(observe::GpuState::kUnhealthy)) {
    throw std::out_of_range("GPU state " + std::to_string(state) + " is not one gleaner knows");
  }
  g.state = static_cast<observe::GpuState>(state);
  const int lend = j.at(1).get<int>();
  g.lendable_free = (lend & 1) != 0;
  g.lendable_placed = (lend & 2) != 0;
  g.utilization_pct = Opt<double>(j.at(2));
  g.memory_used_mib = Opt<int64_t>(j.at(3));
  g.power_w = Opt<double>(j.at(4));
  g.temperature_c = Opt<double>(j.at(5));
  return g;
}

std::string_view KindName(JobEvent::Kind k) {
  switch (k) {
    case JobEvent::Kind::kStarted:
      return "started";
    case JobEvent::Kind::kVacating:
      return "vacating";
    case JobEvent::Kind::kExited:
      return "exited";
  }
  return "?";
}

json EventToJson(const JobEvent& e) {
  json j = {{"seq", e.seq},
            {"job", AttemptToJson(e.of)},
            {"kind", KindName(e.kind)},
            {"at_us", core::ToUnixMicros(e.at)}};
  if (!e.reason.empty()) j["reason"] = e.reason;
  if (e.pid) j["pid"] = *e.pid;
  if (e.process_started_at) j["process_started_us"] = core::ToUnixMicros(*e.process_started_at);
  if (e.exit_code) j["exit_code"] = *e.exit_code;
  if (e.signal) j["signal"] = *e.signal;
  if (e.status_unknown) j["status_unknown"] = true;
  if (e.vacated) j["vacated"] = true;
  if (e.launch_failed) j["launch_failed"] = true;
  return j;
}

JobEvent EventFromJson(const json& j) {
  JobEvent e;
  e.seq = j.at("seq").get<int64_t>();
  e.of = AttemptFromJson(j.at("job"));
  const std::string kind = j.at("kind").get<std::string>();
  if (kind == "started") {
    e.kind = JobEvent::Kind::kStarted;
  } else if (kind == "vacating") {
    e.kind = JobEvent::Kind::kVacating;
  } else if (kind == "exited") {
    e.kind = JobEvent::Kind::kExited;
  } else {
    throw std::out_of_range("event kind \"" + kind + "\": expected started, vacating or exited");
  }
  e.at = core::FromUnixMicros(j.at("at_us").get<int64_t>());
  e.reason = j.value("reason", "");
  if (j.contains("pid")) e.pid = j["pid"].get<int>();
  if (j.contains("process_started_us")) {
    e.process_started_at = core::FromUnixMicros(j["process_started_us"].get<int64_t>());
  }
  if (j.contains("exit_code")) e.exit_code = j["exit_code"].get<int>();
  if (j.contains("signal")) e.signal = j["signal"].get<int>();
  e.status_unknown = j.value("status_unknown", false);
  e.vacated = j.value("vacated", false);
  e.launch_failed = j.value("launch_failed", false);
  return e;
}

json MinuteToJson(const observe::MinuteRollup& m) {
  return {{"gpu", m.uuid.str()},
          {"minute_us", core::ToUnixMicros(m.minute)},
          {"samples", m.samples},
          {"util", {m.utilization_min_pct, m.utilization_mean_pct, m.utilization_max_pct}},
          {"memory_used_max", m.memory_used_max ? json(m.memory_used_max->count()) : json(nullptr)},
          {"power_mean_w", OrNull(m.power_mean_w)},
          {"pids", m.pids},
          {"users", m.users},
          {"job_users", m.job_users},
          {"state", static_cast<int>(m.state)},
          {"us",
           {m.observed.count(), m.busy.count(), m.idle.count(), m.held_idle.count(),
            m.harvested.count()}}};
}

observe::MinuteRollup MinuteFromJson(const json& j) {
  observe::MinuteRollup m;
  m.uuid = core::GpuUuid(j.at("gpu").get<std::string>());
  m.minute = core::FromUnixMicros(j.at("minute_us").get<int64_t>());
  m.samples = j.at("samples").get<int>();
  const json& util = j.at("util");
  m.utilization_min_pct = util.at(0).get<double>();
  m.utilization_mean_pct = util.at(1).get<double>();
  m.utilization_max_pct = util.at(2).get<double>();
  if (auto mem = Opt<uint64_t>(j.at("memory_used_max"))) m.memory_used_max = core::Bytes(*mem);
  m.power_mean_w = Opt<double>(j.at("power_mean_w"));
  m.pids = j.at("pids").get<std::set<uint32_t>>();
  m.users = j.at("users").get<std::set<std::string>>();
  m.job_users = j.at("job_users").get<std::set<std::string>>();
  const int state = j.at("state").get<int>();
  if (state < 0 || state > static_cast<int>(observe::GpuState::kUnhealthy)) {
    throw std::out_of_range("minute state " + std::to_string(state) + " is not one gleaner knows");
  }
  m.state = static_cast<observe::GpuState>(state);
  const json& us = j.at("us");
  m.observed = core::Duration(us.at(0).get<int64_t>());
  m.busy = core::Duration(us.at(1).get<int64_t>());
  m.idle = core::Duration(us.at(2).get<int64_t>());
  m.held_idle = core::Duration(us.at(3).get<int64_t>());
  m.harvested = core::Duration(us.at(4).get<int64_t>());
  return m;
}

// nlohmann throws on a wrong type or a missing key: one message for all.
template <typename T, typename Parse>
core::Result<T> Decode(std::string_view what, Parse parse) {
  try {
    return parse();
  } catch (const std::exception& e) {
    return core::InvalidArgument(std::string(what) + ": " + e.what());
  }
}

}  // namespace

json ReportToJson(const AgentReport& r) {
  json j = json::object();
  if (r.inventory) {
    json inv = json::array();
    for (const InventoryGpu& g : *r.inventory) {
      inv.push_back({{"uuid", g.uuid.str()},
                     {"index", g.index},
                     {"model", g.model},
                     {"memory_bytes", g.memory.count()},
                     {"island", g.nvlink_island}});
    }
    j["inventory"] = std::move(inv);
  }
  json gpus = json::array();
  for (const GpuStatus& g : r.gpus) gpus.push_back(GpuStatusToJson(g));
  j["gpus"] = std::move(gpus);
  if (!r.reasons.empty()) {
    json reasons = json::array();
    for (const auto& [at, why] : r.reasons) reasons.push_back(json::array({at, why}));
    j["reasons"] = std::move(reasons);
  }
  json running = json::array();
  for (const JobAttempt& a : r.running) running.push_back(AttemptToJson(a));
  j["running"] = std::move(running);
  if (!r.events.empty()) {
    json events = json::array();
    for (const JobEvent& e : r.events) events.push_back(EventToJson(e));
    j["events"] = std::move(events);
  }
  if (!r.minutes.empty()) {
    json minutes = json::array();
    for (const observe::MinuteRollup& m : r.minutes) minutes.push_back(MinuteToJson(m));
    j["minutes"] = std::move(minutes);
  }
  return j;
}

core::Result<AgentReport> ReportFromJson(const json& j) {
  return Decode<AgentReport>("agent report", [&] {
    AgentReport r;
    if (j.contains("inventory")) {
      std::vector<InventoryGpu> inv;
      for (const json& g : j["inventory"]) {
        inv.push_back({core::GpuUuid(g.at("uuid").get<std::string>()), g.at("index").get<int>(),
                       g.at("model").get<std::string>(),
                       core::Bytes(g.at("memory_bytes").get<uint64_t>()), g.value("island", -1)});
      }
      r.inventory = std::move(inv);
    }
    for (const json& g : j.at("gpus")) r.gpus.push_back(GpuStatusFromJson(g));
    for (const json& why : j.value("reasons", json::array())) {
      r.reasons.emplace_back(why.at(0).get<int>(), why.at(1).get<std::string>());
    }
    for (const json& a : j.at("running")) r.running.push_back(AttemptFromJson(a));
    for (const json& e : j.value("events", json::array())) r.events.push_back(EventFromJson(e));
    for (const json& m : j.value("minutes", json::array())) r.minutes.push_back(MinuteFromJson(m));
    return r;
  });
}

json ReplyToJson(const AgentReply& r) {
  json j = {{"acked", r.acked}, {"lease_s", core::ToSecondsDouble(r.lease)}};
  if (r.send_inventory) j["send_inventory"] = true;
  json assigned = json::array();
  for (const JobAttempt& a : r.assigned) assigned.push_back(AttemptToJson(a));
  j["assigned"] = std::move(assigned);
  if (!r.start.empty()) {
    json start = json::array();
    for (const JobToStart& s : r.start) {
      json gpus = json::array();
      for (const core::GpuUuid& g : s.gpus) gpus.push_back(g.str());
      json one = {{"job", AttemptToJson(s.of)},
                  {"user", s.user},
                  {"spec", sched::JobSpecToJson(s.spec)},
                  {"gpus", std::move(gpus)}};
      if (s.array_id) one["array"] = json::array({*s.array_id, s.array_index});
      start.push_back(std::move(one));
    }
    j["start"] = std::move(start);
  }
  if (!r.preempt.empty()) {
    json preempt = json::array();
    for (const Preemption& p : r.preempt) {
      preempt.push_back({{"job", AttemptToJson(p.of)}, {"reason", p.reason}});
    }
    j["preempt"] = std::move(preempt);
  }
  return j;
}

core::Result<AgentReply> ReplyFromJson(const json& j) {
  return Decode<AgentReply>("coordinator reply", [&]() -> AgentReply {
    AgentReply r;
    r.acked = j.at("acked").get<int64_t>();
    r.lease = core::Duration(static_cast<int64_t>(j.at("lease_s").get<double>() * 1e6));
    r.send_inventory = j.value("send_inventory", false);
    for (const json& a : j.at("assigned")) r.assigned.push_back(AttemptFromJson(a));
    for (const json& s : j.value("start", json::array())) {
      JobToStart one;
      one.of = AttemptFromJson(s.at("job"));
      one.user = s.at("user").get<std::string>();
      auto spec = sched::JobSpecFromJson(s.at("spec"));
      if (!spec.ok()) throw std::invalid_argument("job spec: " + spec.status().message());
      one.spec = std::move(spec).value();
      for (const json& g : s.at("gpus")) one.gpus.emplace_back(g.get<std::string>());
      if (s.contains("array")) {
        one.array_id = s["array"].at(0).get<sched::JobId>();
        one.array_index = s["array"].at(1).get<int64_t>();
      }
      r.start.push_back(std::move(one));
    }
    for (const json& p : j.value("preempt", json::array())) {
      r.preempt.push_back({AttemptFromJson(p.at("job")), p.at("reason").get<std::string>()});
    }
    return r;
  });
}

}  // namespace gleaner::cluster
