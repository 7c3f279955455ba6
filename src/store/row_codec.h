#pragma once

// Internal to the store backends: a stored row turned back into a record.
// Shared by SQLite and PostgreSQL so both read their columns the same way.
// `Row` is anything with Int(col), Real(col), Text(col) and Null(col)
// (sqlite::Statement, pg::Row); columns are in the order of the lists below.

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "observe/minute_rollup.h"
#include "observe/verdict_json.h"
#include "store/event_store.h"
#include "store/job_store.h"
#include "store/observation_store.h"
#include "store/text_list.h"
#include "store/token_store.h"

namespace gleaner::store {

// Times are microseconds since the Unix epoch; a roll-up's minute is in
// seconds; durations in a minute are seconds as a double.
constexpr const char* kRollupColumns = R"sql(
    uuid, minute_s, samples, utilization_min_pct, utilization_mean_pct, utilization_max_pct,
    memory_used_max_bytes, power_mean_w, pids, users, state, observed_s, busy_s, idle_s,
    held_idle_s, harvested_s, job_users)sql";

constexpr const char* kGpuColumns =
    "uuid, host, idx, name, memory_total_bytes, first_seen_us, last_seen_us";

template <typename Row>
observe::MinuteRollup RollupFromRow(const Row& q) {
  observe::MinuteRollup r;
  r.uuid = core::GpuUuid(q.Text(0));
  r.minute = core::FromUnixMicros(q.Int(1) * 1'000'000);
  r.samples = static_cast<int>(q.Int(2));
  r.utilization_min_pct = q.Real(3);
  r.utilization_mean_pct = q.Real(4);
  r.utilization_max_pct = q.Real(5);
  if (!q.Null(6)) r.memory_used_max = core::Bytes(static_cast<uint64_t>(q.Int(6)));
  if (!q.Null(7)) r.power_mean_w = q.Real(7);
  for (const std::string& item : SplitList(q.Text(8))) {
    uint32_t pid = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), pid);
    if (error == std::errc() && end == item.data() + item.size()) r.pids.insert(pid);
  }
  for (const std::string& user : SplitList(q.Text(9))) r.users.insert(user);
  r.state = observe::ParseGpuState(q.Text(10)).value_or(observe::GpuState::kUnknown);
  const auto seconds = [&q](int column) {
    return core::Duration(std::llround(q.Real(column) * 1e6));
  };
  r.observed = seconds(11);
  r.busy = seconds(12);
  r.idle = seconds(13);
  r.held_idle = seconds(14);
  r.harvested = seconds(15);
  for (const std::string& user : SplitList(q.Text(16))) r.job_users.insert(user);
  return r;
}

template <typename Row>
GpuRecord GpuFromRow(const Row& q) {
  GpuRecord g;
  g.uuid = core::GpuUuid(q.Text(0));
  g.host = q.Text(1);
  g.index = static_cast<uint32_t>(q.Int(2));
  g.name = q.Text(3);
  if (!q.Null(4)) g.memory_total = core::Bytes(static_cast<uint64_t>(q.Int(4)));
  g.first_seen = core::FromUnixMicros(q.Int(5));
  g.last_seen = core::FromUnixMicros(q.Int(6));
  return g;
}

// Columns: id, user, uid, spec, state, attempts, submitted_us, started_us,
// finished_us, gpus, exit_code, reason, pid, process_start_us, array_id,
// array_index.
template <typename Row>
core::Result<JobRecord> JobFromRow(const Row& q) {
  JobRecord r;
  r.id = q.Int(0);
  r.user = q.Text(1);
  r.uid = static_cast<uint32_t>(q.Int(2));
  auto spec_json = nlohmann::json::parse(q.Text(3), nullptr, false);
  if (spec_json.is_discarded()) {
    return core::Internal("job " + std::to_string(r.id) + ": stored spec is not JSON");
  }
  GLEANER_ASSIGN_OR_RETURN(r.spec, sched::JobSpecFromJson(spec_json));
  const std::optional<JobState> state = ParseJobState(q.Text(4));
  if (!state) return core::Internal("job " + std::to_string(r.id) + ": unknown state " + q.Text(4));
  r.state = *state;
  r.attempts = static_cast<int>(q.Int(5));
  r.submitted_at = core::FromUnixMicros(q.Int(6));
  if (!q.Null(7)) r.started_at = core::FromUnixMicros(q.Int(7));
  if (!q.Null(8)) r.finished_at = core::FromUnixMicros(q.Int(8));
  for (const std::string& g : SplitList(q.Text(9))) r.gpus.emplace_back(g);
  if (!q.Null(10)) r.exit_code = static_cast<int>(q.Int(10));
  r.reason = q.Text(11);
  if (!q.Null(12)) r.pid = static_cast<int>(q.Int(12));
  if (!q.Null(13)) r.process_started_at = core::FromUnixMicros(q.Int(13));
  if (!q.Null(14)) r.array_id = q.Int(14);
  r.array_index = q.Int(15);
  return r;
}

// Columns: id, user, uid, name, created_us, revoked_us, expires_us,
// scopes, projects.
template <typename Row>
TokenRecord TokenFromRow(const Row& q) {
  TokenRecord t;
  t.id = q.Int(0);
  t.user = q.Text(1);
  t.uid = static_cast<uint32_t>(q.Int(2));
  t.name = q.Text(3);
  t.created_at = core::FromUnixMicros(q.Int(4));
  if (!q.Null(5)) t.revoked_at = core::FromUnixMicros(q.Int(5));
  if (!q.Null(6)) t.expires_at = core::FromUnixMicros(q.Int(6));
  if (!q.Null(7)) t.scopes = SplitList(q.Text(7));
  t.projects = SplitList(q.Text(8));
  return t;
}

// GPUs as one column's text.
inline std::string GpuListText(const std::vector<core::GpuUuid>& gpus) {
  std::vector<std::string> ids;
  for (const core::GpuUuid& g : gpus) ids.push_back(g.str());
  return JoinList(ids);
}

// Columns: id, at_us, kind, job_id, user, actor, gpus, detail.
template <typename Row>
EventRecord EventFromRow(const Row& q) {
  EventRecord e;
  e.id = q.Int(0);
  e.at = core::FromUnixMicros(q.Int(1));
  e.kind = q.Text(2);
  if (!q.Null(3)) e.job = q.Int(3);
  e.user = q.Text(4);
  e.actor = q.Text(5);
  for (const std::string& g : SplitList(q.Text(6))) e.gpus.emplace_back(g);
  e.detail = q.Text(7);
  return e;
}

// The time a job's move happened: when the move says it did, or started
// or finished, else now.
inline core::TimePoint MoveTime(const JobUpdate& u) {
  if (u.at) return *u.at;
  if (u.finished_at) return *u.finished_at;
  if (u.started_at) return *u.started_at;
  return core::RealClock().Now();
}

// What a submitted job's first event says about it.
std::string SubmittedDetail(const NewJob& job);

// Task `task` of `job` as submitted at `now`, before the store gives it an
// id: queued, or waiting for approval.
JobRecord NewRecord(const NewJob& job, int64_t task, core::TimePoint now);

// A stored pause model; a damaged one is an error that names the host.
inline core::Result<std::optional<observe::QuietSpellModel>> PauseModelFromRow(
    const std::string& host, const std::string& text) {
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  auto model =
      parsed.is_discarded()
          ? core::Result<observe::QuietSpellModel>(core::InvalidArgument("the text is not JSON"))
          : observe::PauseModelFromJson(parsed);
  if (!model.ok()) {
    return core::Internal("the stored pause model of " + host + " is damaged (" +
                          model.status().message() + ")");
  }
  return std::optional<observe::QuietSpellModel>(*model);
}

}  // namespace gleaner::store
