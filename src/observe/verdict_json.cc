#include "observe/verdict_json.h"

#include <cmath>
#include <stdexcept>

#include "core/civil_time.h"

namespace gleaner::observe {
namespace {

using nlohmann::json;

json Seconds(core::Duration d) { return core::ToSecondsDouble(d); }
// A verdict may come from another host (an agent's report): a duration
// beyond any plausible one is refused, not rounded into nonsense.
core::Duration FromSeconds(const json& j) {
  const double s = j.get<double>();
  if (!std::isfinite(s) || std::abs(s) > 1e12) {
    throw std::out_of_range(std::to_string(s) + " s is not a plausible duration");
  }
  return core::Duration(static_cast<int64_t>(std::llround(s * 1e6)));
}
template <typename T>
json Optional(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

json BesideHolderToJson(const BesideHolder& b) {
  return {{"lendable_bytes", b.lendable.count()},
          {"holder_memory_bytes", b.holder_memory.count()},
          {"holder_peak_bytes", b.holder_peak.count()},
          {"history_s", Seconds(b.history)},
          {"margin_bytes", b.margin.count()},
          {"declared_bytes", b.declared.count()},
          {"borrower_memory_bytes", b.borrower_memory.count()},
          {"reason", b.reason}};
}

BesideHolder BesideHolderFromJson(const json& j) {
  const auto bytes = [&](const char* key) { return core::Bytes(j.at(key).get<uint64_t>()); };
  return {bytes("lendable_bytes"),        bytes("holder_memory_bytes"),
          bytes("holder_peak_bytes"),     FromSeconds(j.at("history_s")),
          bytes("margin_bytes"),          bytes("declared_bytes"),
          bytes("borrower_memory_bytes"), j.at("reason").get<std::string>()};
}

json ParkingToJson(const HolderParking& p) {
  return {{"phase", ParkingPhaseName(p.phase)},
          {"pid", p.pid},
          {"user", p.user},
          {"memory_bytes", p.memory.count()},
          {"at", core::Rfc3339(p.at)},
          {"at_us", core::ToUnixMicros(p.at)},
          {"reason", p.reason},
          {"waiting", p.waiting}};
}

HolderParking ParkingFromJson(const json& j) {
  const std::string name = j.at("phase").get<std::string>();
  const std::optional<HolderParking::Phase> phase = ParseParkingPhase(name);
  if (!phase) throw std::out_of_range("unknown parking phase \"" + name + "\"");
  return {*phase,
          j.at("pid").get<uint32_t>(),
          j.at("user").get<std::string>(),
          core::Bytes(j.at("memory_bytes").get<uint64_t>()),
          core::FromUnixMicros(j.at("at_us").get<int64_t>()),
          j.at("reason").get<std::string>(),
          j.value("waiting", std::string())};  // absent from hosts before it was said
}

json VerdictToJson(const Verdict& v) {
  const Evidence& e = v.evidence;
  json out = {
      {"uuid", v.uuid.str()},
      {"state", GpuStateName(v.state)},
      {"since", core::Rfc3339(v.since)},
      {"since_us", core::ToUnixMicros(v.since)},
      {"at_us", core::ToUnixMicros(v.at)},
      {"evidence",
       {{"reason", e.reason},
        {"window_s", Seconds(e.window)},
        {"quiet_for_s", Seconds(e.quiet_for)},
        {"observed_for_s", Seconds(e.observed_for)},
        {"utilization_pct", Optional(e.utilization_pct)},
        {"max_utilization_pct_in_window", e.max_utilization_pct_in_window},
        {"processes", e.processes},
        {"foreign_processes", e.foreign_processes},
        {"lent_to_job", Optional(e.lent_to_job)},
        {"process_memory_bytes", e.process_memory.count()},
        {"power_w", Optional(e.power_w)},
        {"idle_power_w", Optional(e.idle_power_w)},
        {"confidence", Optional(e.confidence)},
        {"similar_pauses", e.similar_pauses}}},
  };
  if (e.beside_holder) out["evidence"]["beside_holder"] = BesideHolderToJson(*e.beside_holder);
  if (e.parking) out["evidence"]["parking"] = ParkingToJson(*e.parking);
  if (!e.lend_blocked.empty()) out["evidence"]["lend_blocked"] = e.lend_blocked;
  if (e.quiet_forecast) {
    const QuietForecast& f = *e.quiet_forecast;
    out["evidence"]["quiet_forecast"] = {{"p80_s", Seconds(f.p80)},
                                         {"p50_s", Seconds(f.p50)},
                                         {"p20_s", Seconds(f.p20)},
                                         {"spells", f.spells},
                                         {"own", f.own}};
  }
  return out;
}

core::Result<Verdict> VerdictFromJson(const json& j) {
  try {
    Verdict v;
    v.uuid = core::GpuUuid(j.at("uuid").get<std::string>());
    const std::string state = j.at("state").get<std::string>();
    const std::optional<GpuState> parsed = ParseGpuState(state);
    if (!parsed) return core::InvalidArgument("unknown GPU state \"" + state + "\"");
    v.state = *parsed;
    v.since = core::FromUnixMicros(j.at("since_us").get<int64_t>());
    v.at = core::FromUnixMicros(j.at("at_us").get<int64_t>());
    const json& e = j.at("evidence");
    Evidence& ev = v.evidence;
    ev.reason = e.at("reason").get<std::string>();
    ev.window = FromSeconds(e.at("window_s"));
    ev.quiet_for = FromSeconds(e.at("quiet_for_s"));
    ev.observed_for = FromSeconds(e.at("observed_for_s"));
    if (!e.at("utilization_pct").is_null())
      ev.utilization_pct = e.at("utilization_pct").get<double>();
    ev.max_utilization_pct_in_window = e.at("max_utilization_pct_in_window").get<double>();
    ev.processes = e.at("processes").get<int>();
    ev.foreign_processes = e.value("foreign_processes", 0);
    if (e.contains("lent_to_job") && !e["lent_to_job"].is_null()) {
      ev.lent_to_job = e["lent_to_job"].get<int64_t>();
    }
    ev.process_memory = core::Bytes(e.at("process_memory_bytes").get<uint64_t>());
    if (!e.at("power_w").is_null()) ev.power_w = e.at("power_w").get<double>();
    if (!e.at("idle_power_w").is_null()) ev.idle_power_w = e.at("idle_power_w").get<double>();
    if (!e.at("confidence").is_null()) ev.confidence = e.at("confidence").get<double>();
    ev.similar_pauses = e.at("similar_pauses").get<int64_t>();
    if (e.contains("beside_holder")) ev.beside_holder = BesideHolderFromJson(e["beside_holder"]);
    if (e.contains("parking")) ev.parking = ParkingFromJson(e["parking"]);
    ev.lend_blocked = e.value("lend_blocked", "");
    if (e.contains("quiet_forecast")) {
      const json& f = e["quiet_forecast"];
      ev.quiet_forecast = QuietForecast{FromSeconds(f.at("p80_s")), FromSeconds(f.at("p50_s")),
                                        FromSeconds(f.at("p20_s")), f.at("spells").get<int64_t>(),
                                        f.at("own").get<bool>()};
    }
    return v;
  } catch (const std::exception& e) {  // nlohmann's, or an implausible duration
    return core::InvalidArgument(std::string("malformed verdict: ") + e.what());
  }
}

json PauseModelToJson(const QuietSpellModel& model) {
  json cells = json::array();
  for (const QuietSpellModel::Count& c : model.cells()) {
    cells.push_back({c.stayed_quiet, c.total, c.pauses});
  }
  return cells;
}

core::Result<QuietSpellModel> PauseModelFromJson(const json& j) {
  QuietSpellModel::Cells cells;
  if (!j.is_array() || j.size() != cells.size()) {
    return core::InvalidArgument("a pause model has " + std::to_string(cells.size()) +
                                 " [stayed quiet, total, pauses] buckets");
  }
  for (size_t i = 0; i < cells.size(); ++i) {
    const json& c = j[i];
    // A model kept before pauses were counted has pairs: each moment is
    // taken for a pause, as it was then.
    const bool pair = c.is_array() && c.size() == 2;
    const bool ok =
        c.is_array() && (pair || c.size() == 3) && c[0].is_number_integer() &&
        c[1].is_number_integer() && (pair || c[2].is_number_integer()) &&
        c[0].get<int64_t>() >= 0 && c[0].get<int64_t>() <= c[1].get<int64_t>() &&
        (pair || (c[2].get<int64_t>() >= 0 && c[2].get<int64_t>() <= c[1].get<int64_t>()));
    if (!ok) {
      return core::InvalidArgument("pause model bucket " + std::to_string(i) + " is " + c.dump() +
                                   ", not [stayed quiet, total, pauses] with 0 <= stayed quiet <= "
                                   "total and 0 <= pauses <= total");
    }
    cells[i] = {c[0].get<int64_t>(), c[1].get<int64_t>(),
                pair ? c[1].get<int64_t>() : c[2].get<int64_t>()};
  }
  return QuietSpellModel(cells);
}

}  // namespace gleaner::observe
