#include "cluster/agent_protocol.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/enum_names.h"
#include "observe/verdict_json.h"

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

// An integer field. nlohmann converts a JSON float to an integer type with
// a plain cast, which is undefined behaviour out of range (an "index" of
// 1e300), so floats are refused and integers checked against Int's range.
template <typename Int>
Int Whole(const json& j) {
  if (j.is_number_unsigned()) {
    if (const auto v = j.get<uint64_t>(); std::in_range<Int>(v)) return static_cast<Int>(v);
  } else if (j.is_number_integer()) {
    if (const auto v = j.get<int64_t>(); std::in_range<Int>(v)) return static_cast<Int>(v);
  } else {
    throw std::invalid_argument(std::string("expected a whole number, got ") + j.type_name());
  }
  throw std::out_of_range("the whole number " + j.dump() + " is out of range");
}

template <typename Int>
std::optional<Int> OptWhole(const json& j) {
  if (j.is_null()) return std::nullopt;
  return Whole<Int>(j);
}

// Values a JSON number carries, rounded to what a reading means: a tenth
// of a percent, watt or degree keeps reports small.
json Rounded(const std::optional<double>& v) {
  return v ? json(std::round(*v * 10) / 10) : json(nullptr);
}

json AttemptToJson(const JobAttempt& a) { return json::array({a.job, a.attempt}); }

// A host or rack name as a gang's members are told it (it lands in a
// hostfile, one per line): a DNS name or an address, nothing else.
std::string HostWord(const char* what, std::string name) {
  const bool plain =
      !name.empty() && name.size() <= 255 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
               c == ':';
      });
  if (!plain) {
    throw std::invalid_argument(std::string(what) +
                                ": 1 to 255 letters, digits, '.', '-', '_' or ':'");
  }
  return name;
}

GangRole GangFromJson(const json& j) {
  GangRole g;
  g.rank = Whole<int>(j.at("rank"));
  for (const json& h : j.at("hosts")) {
    if (g.hosts.size() == kMaxGangHosts) throw std::invalid_argument("gang: too many hosts");
    g.hosts.push_back(HostWord("gang host", h.get<std::string>()));
  }
  g.gpus_per_node = Whole<int>(j.at("gpus_per_node"));
  g.port = Whole<int>(j.at("port"));
  if (g.hosts.size() < 2 || g.rank < 0 || static_cast<size_t>(g.rank) >= g.hosts.size() ||
      g.gpus_per_node < 1 || g.port < 1 || g.port > 65535) {
    throw std::invalid_argument("gang: rank, hosts, gpus_per_node or port out of range");
  }
  return g;
}
JobAttempt AttemptFromJson(const json& j) {
  return {Whole<sched::JobId>(j.at(0)), Whole<int>(j.at(1))};
}

json GpuStatusToJson(const GpuStatus& g) {
  json out = json::array({static_cast<int>(g.state),
                          (g.lendable_free ? 1 : 0) | (g.lendable_placed ? 2 : 0),
                          Rounded(g.utilization_pct), OrNull(g.memory_used_mib), Rounded(g.power_w),
                          Rounded(g.temperature_c)});
  // Trailing fields only where set; a field before a set one is written.
  if (g.lend_memory_mib > 0 || g.quiet_p80_s > 0) out.push_back(g.lend_memory_mib);
  if (g.quiet_p80_s > 0) out.push_back(g.quiet_p80_s);
  return out;
}

GpuStatus GpuStatusFromJson(const json& j) {
  GpuStatus g;
  const int state = Whole<int>(j.at(0));
  if (state < 0 || state > static_cast<int>(observe::GpuState::kShared)) {
    throw std::out_of_range("GPU state " + std::to_string(state) + " is not one gleaner knows");
  }
  g.state = static_cast<observe::GpuState>(state);
  const int lend = Whole<int>(j.at(1));
  g.lendable_free = (lend & 1) != 0;
  g.lendable_placed = (lend & 2) != 0;
  g.utilization_pct = Opt<double>(j.at(2));
  g.memory_used_mib = OptWhole<int64_t>(j.at(3));
  g.power_w = Opt<double>(j.at(4));
  g.temperature_c = Opt<double>(j.at(5));
  if (j.size() > 6) {
    g.lend_memory_mib = Whole<int64_t>(j.at(6));
    if (g.lend_memory_mib < 0 || g.lend_memory_mib > (int64_t{1} << 30)) {
      throw std::out_of_range(std::to_string(g.lend_memory_mib) +
                              " MiB to lend beside a holder is not a GPU's memory");
    }
  }
  if (j.size() > 7) {
    g.quiet_p80_s = Whole<int64_t>(j.at(7));
    if (g.quiet_p80_s < 0 || g.quiet_p80_s > int64_t{366} * 86400) {
      throw std::out_of_range(std::to_string(g.quiet_p80_s) +
                              " s of expected quiet is not 0 to a year");
    }
  }
  return g;
}

constexpr auto kKindNames = core::MakeEnumNames<JobEvent::Kind>({
    {JobEvent::Kind::kStarted, "started"},
    {JobEvent::Kind::kVacating, "vacating"},
    {JobEvent::Kind::kExited, "exited"},
});

std::string_view KindName(JobEvent::Kind k) { return kKindNames.Name(k); }

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
  e.seq = Whole<int64_t>(j.at("seq"));
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
  e.at = core::FromUnixMicros(Whole<int64_t>(j.at("at_us")));
  e.reason = j.value("reason", "");
  if (j.contains("pid")) e.pid = Whole<int>(j["pid"]);
  if (j.contains("process_started_us")) {
    e.process_started_at = core::FromUnixMicros(Whole<int64_t>(j["process_started_us"]));
  }
  if (j.contains("exit_code")) e.exit_code = Whole<int>(j["exit_code"]);
  if (j.contains("signal")) e.signal = Whole<int>(j["signal"]);
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
  m.minute = core::FromUnixMicros(Whole<int64_t>(j.at("minute_us")));
  m.samples = Whole<int>(j.at("samples"));
  const json& util = j.at("util");
  m.utilization_min_pct = util.at(0).get<double>();
  m.utilization_mean_pct = util.at(1).get<double>();
  m.utilization_max_pct = util.at(2).get<double>();
  if (auto mem = OptWhole<uint64_t>(j.at("memory_used_max"))) {
    m.memory_used_max = core::Bytes(*mem);
  }
  m.power_mean_w = Opt<double>(j.at("power_mean_w"));
  if (!j.at("pids").is_array()) throw std::invalid_argument("pids: expected a list");
  for (const json& pid : j.at("pids")) m.pids.insert(Whole<uint32_t>(pid));
  m.users = j.at("users").get<std::set<std::string>>();
  m.job_users = j.at("job_users").get<std::set<std::string>>();
  const int state = Whole<int>(j.at("state"));
  if (state < 0 || state > static_cast<int>(observe::GpuState::kShared)) {
    throw std::out_of_range("minute state " + std::to_string(state) + " is not one gleaner knows");
  }
  m.state = static_cast<observe::GpuState>(state);
  const json& us = j.at("us");
  m.observed = core::Duration(Whole<int64_t>(us.at(0)));
  m.busy = core::Duration(Whole<int64_t>(us.at(1)));
  m.idle = core::Duration(Whole<int64_t>(us.at(2)));
  m.held_idle = core::Duration(Whole<int64_t>(us.at(3)));
  m.harvested = core::Duration(Whole<int64_t>(us.at(4)));
  return m;
}

json DetailToJson(int at, const GpuDetail& d) {
  json j = {{"at", at}, {"verdict", observe::VerdictToJson(d.verdict)}};
  if (!d.processes_known) {
    j["processes"] = nullptr;
    return j;
  }
  json processes = json::array();
  for (const observe::ObservedProcess& p : d.processes) {
    processes.push_back({{"pid", p.pid},
                         {"user", p.user},
                         {"command", p.command},
                         {"memory_bytes", p.used_memory.count()},
                         {"gleaner_job", p.gleaner_job}});
    if (p.utilization_pct) processes.back()["utilization_pct"] = Rounded(p.utilization_pct);
  }
  j["processes"] = std::move(processes);
  return j;
}

std::pair<int, GpuDetail> DetailFromJson(const json& j) {
  GpuDetail d;
  auto verdict = observe::VerdictFromJson(j.at("verdict"));
  if (!verdict.ok()) throw std::invalid_argument("verdict: " + verdict.status().message());
  d.verdict = std::move(verdict).value();
  const json& processes = j.at("processes");
  d.processes_known = !processes.is_null();
  if (d.processes_known) {
    if (!processes.is_array() || processes.size() > kMaxProcessesPerGpu) {
      throw std::invalid_argument("processes: expected a list of at most 64");
    }
    for (const json& p : processes) {
      d.processes.push_back({Whole<uint32_t>(p.at("pid")),
                             p.at("user").get<std::string>(),
                             p.at("command").get<std::string>(),
                             core::Bytes(Whole<uint64_t>(p.at("memory_bytes"))),
                             p.at("gleaner_job").get<bool>(),
                             Opt<double>(p.value("utilization_pct", json())),
                             {}});
      if (const auto& u = d.processes.back().utilization_pct; u && (*u < 0 || *u > 100)) {
        throw std::out_of_range("utilization_pct: expected 0 to 100");
      }
    }
  }
  return {Whole<int>(j.at("at")), std::move(d)};
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
  j["protocol"] = r.protocol;
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
    if (!r.rack.empty()) j["rack"] = r.rack;
    if (r.host.cpu_milli > 0) j["host_cpu_milli"] = r.host.cpu_milli;
    if (r.host.memory.count() > 0) j["host_memory_bytes"] = r.host.memory.count();
  }
  json gpus = json::array();
  for (const GpuStatus& g : r.gpus) gpus.push_back(GpuStatusToJson(g));
  j["gpus"] = std::move(gpus);
  if (!r.reasons.empty()) {
    json reasons = json::array();
    for (const auto& [at, why] : r.reasons) reasons.push_back(json::array({at, why}));
    j["reasons"] = std::move(reasons);
  }
  if (!r.details.empty()) {
    json details = json::array();
    for (const auto& [at, d] : r.details) details.push_back(DetailToJson(at, d));
    j["details"] = std::move(details);
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
  if (!r.run.empty()) j["run"] = r.run;
  if (!r.logs.empty()) {
    json logs = json::array();
    for (const LogChunk& c : r.logs) {
      json one = {{"id", c.id}, {"data", c.data}, {"next", c.next}};
      if (!c.error.empty()) one["error"] = c.error;
      logs.push_back(std::move(one));
    }
    j["logs"] = std::move(logs);
  }
  return j;
}

core::Result<AgentReport> ReportFromJson(const json& j) {
  return Decode<AgentReport>("agent report", [&] {
    AgentReport r;
    r.protocol = j.contains("protocol") ? Whole<int>(j["protocol"]) : 1;
    if (j.contains("inventory")) {
      std::vector<InventoryGpu> inv;
      for (const json& g : j["inventory"]) {
        inv.push_back({core::GpuUuid(g.at("uuid").get<std::string>()), Whole<int>(g.at("index")),
                       g.at("model").get<std::string>(),
                       core::Bytes(Whole<uint64_t>(g.at("memory_bytes"))),
                       g.contains("island") ? Whole<int>(g.at("island")) : -1});
      }
      r.inventory = std::move(inv);
      if (j.contains("rack")) r.rack = HostWord("rack", j["rack"].get<std::string>());
      if (j.contains("host_cpu_milli")) r.host.cpu_milli = Whole<uint32_t>(j["host_cpu_milli"]);
      if (j.contains("host_memory_bytes")) {
        const auto bytes = Whole<uint64_t>(j["host_memory_bytes"]);
        if (bytes > (uint64_t{1} << 50)) throw std::out_of_range("host_memory_bytes beyond 1 PiB");
        r.host.memory = core::Bytes(bytes);
      }
    }
    for (const json& g : j.at("gpus")) r.gpus.push_back(GpuStatusFromJson(g));
    for (const json& why : j.value("reasons", json::array())) {
      r.reasons.emplace_back(Whole<int>(why.at(0)), why.at(1).get<std::string>());
    }
    for (const json& d : j.value("details", json::array())) r.details.push_back(DetailFromJson(d));
    for (const json& a : j.at("running")) r.running.push_back(AttemptFromJson(a));
    for (const json& e : j.value("events", json::array())) r.events.push_back(EventFromJson(e));
    for (const json& m : j.value("minutes", json::array())) r.minutes.push_back(MinuteFromJson(m));
    if (j.contains("run")) {
      if (j["run"].is_string()) r.run = j["run"].get<std::string>();
      if (!j["run"].is_string() || r.run.size() > 64 ||
          r.run.find_first_not_of("0123456789abcdef") != std::string::npos) {
        throw std::invalid_argument("run: at most 64 hex digits (0-9, a-f)");
      }
    }
    for (const json& c : j.value("logs", json::array())) {
      LogChunk chunk{Whole<uint64_t>(c.at("id")), c.at("data").get<std::string>(),
                     Whole<uint64_t>(c.at("next")), c.value("error", std::string())};
      if (chunk.data.size() > 2 * kMaxLogChunkBytes) {  // UTF-8 replacements may grow it
        throw std::invalid_argument("logs: a chunk larger than 128 KiB");
      }
      r.logs.push_back(std::move(chunk));
    }
    return r;
  });
}

json ReplyToJson(const AgentReply& r) {
  json j = {{"acked", r.acked}, {"lease_s", core::ToSecondsDouble(r.lease)}};
  if (r.send_inventory) j["send_inventory"] = true;
  if (r.orders != 0) j["orders"] = r.orders;
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
      if (s.gang) {
        one["gang"] = {{"rank", s.gang->rank},
                       {"hosts", s.gang->hosts},
                       {"gpus_per_node", s.gang->gpus_per_node},
                       {"port", s.gang->port}};
      }
      start.push_back(std::move(one));
    }
    j["start"] = std::move(start);
  }
  for (const auto& [key, list] : {std::pair{"preempt", &r.preempt}, {"cancel", &r.cancel}}) {
    if (list->empty()) continue;
    json out = json::array();
    for (const Preemption& p : *list) {
      out.push_back({{"job", AttemptToJson(p.of)}, {"reason", p.reason}});
    }
    j[key] = std::move(out);
  }
  if (!r.logs.empty()) {
    json logs = json::array();
    for (const LogRequest& l : r.logs) {
      logs.push_back(json::array({l.id, l.job, l.err ? "err" : "out", l.offset}));
    }
    j["logs"] = std::move(logs);
  }
  if (!r.holders.empty()) {
    json holders = json::array();
    for (const HolderRequest& h : r.holders) {
      holders.push_back(json::array({h.gpu.str(), observe::HolderAskName(h.ask)}));
    }
    j["holders"] = std::move(holders);
  }
  return j;
}

core::Result<AgentReply> ReplyFromJson(const json& j) {
  return Decode<AgentReply>("coordinator reply", [&]() -> AgentReply {
    AgentReply r;
    r.acked = Whole<int64_t>(j.at("acked"));
    const double lease_s = j.at("lease_s").get<double>();
    // Out of int64 microseconds' range the cast below is undefined.
    if (!std::isfinite(lease_s) || std::abs(lease_s) > 1e12) {
      throw std::out_of_range("lease_s " + std::to_string(lease_s) + " is not a plausible lease");
    }
    r.lease = core::Duration(static_cast<int64_t>(lease_s * 1e6));
    r.send_inventory = j.value("send_inventory", false);
    if (j.contains("orders")) r.orders = Whole<uint64_t>(j["orders"]);
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
        one.array_id = Whole<sched::JobId>(s["array"].at(0));
        one.array_index = Whole<int64_t>(s["array"].at(1));
      }
      if (s.contains("gang")) one.gang = GangFromJson(s["gang"]);
      r.start.push_back(std::move(one));
    }
    for (const json& p : j.value("preempt", json::array())) {
      r.preempt.push_back({AttemptFromJson(p.at("job")), p.at("reason").get<std::string>()});
    }
    for (const json& p : j.value("cancel", json::array())) {
      r.cancel.push_back({AttemptFromJson(p.at("job")), p.at("reason").get<std::string>()});
    }
    for (const json& l : j.value("logs", json::array())) {
      const std::string stream = l.at(2).get<std::string>();
      if (stream != "out" && stream != "err") throw std::invalid_argument("logs: stream " + stream);
      r.logs.push_back({Whole<uint64_t>(l.at(0)), Whole<sched::JobId>(l.at(1)), stream == "err",
                        Whole<uint64_t>(l.at(3))});
    }
    for (const json& h : j.value("holders", json::array())) {
      const std::string action = h.at(1).get<std::string>();
      const std::optional<observe::HolderAsk> ask = observe::ParseHolderAsk(action);
      if (!ask) throw std::invalid_argument("holders: action " + action);
      r.holders.push_back({core::GpuUuid(h.at(0).get<std::string>()), *ask});
    }
    return r;
  });
}

}  // namespace gleaner::cluster
