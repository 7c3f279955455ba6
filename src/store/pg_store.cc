#include "store/pg_store.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "observe/verdict_json.h"
#include "store/pg_connection.h"
#include "store/pg_schema.h"
#include "store/profiles_of_kind.h"
#include "store/row_codec.h"
#include "store/text_list.h"

namespace gleaner::store {
namespace {

using core::Status;
using pg::Param;
using pg::Row;
using pg::Rows;

int64_t MinuteSeconds(core::TimePoint t) { return core::ToUnixMicros(t) / 1'000'000; }

// In kRollupColumns' order: what both the insert and the update of a
// minute take.
std::vector<Param> RollupParams(const observe::MinuteRollup& r) {
  return {
      r.uuid.str(),
      MinuteSeconds(r.minute),
      static_cast<int64_t>(r.samples),
      r.utilization_min_pct,
      r.utilization_mean_pct,
      r.utilization_max_pct,
      r.memory_used_max ? std::optional<int64_t>(static_cast<int64_t>(r.memory_used_max->count()))
                        : std::nullopt,
      r.power_mean_w,
      JoinList(r.pids),
      JoinList(r.users),
      std::string(observe::GpuStateName(r.state)),
      core::ToSecondsDouble(r.observed),
      core::ToSecondsDouble(r.busy),
      core::ToSecondsDouble(r.idle),
      core::ToSecondsDouble(r.held_idle),
      core::ToSecondsDouble(r.harvested),
      JoinList(r.job_users),
  };
}

std::vector<observe::MinuteRollup> RollupsFrom(const Rows& rows) {
  std::vector<observe::MinuteRollup> out;
  out.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(RollupFromRow(Row(rows, i)));
  return out;
}

// "($1, $2), ($3, $4)": `rows` rows of one placeholder per column, each
// followed by its column's cast ("" for none).
std::string Placeholders(size_t rows, const std::vector<std::string>& casts) {
  std::string out;
  for (size_t r = 0; r < rows; ++r) {
    out += r == 0 ? "(" : ", (";
    for (size_t c = 0; c < casts.size(); ++c) {
      out += "$" + std::to_string(1 + r * casts.size() + c) + casts[c] +
             (c + 1 < casts.size() ? ", " : ")");
    }
  }
  return out;
}

}  // namespace

PgStore::PgStore(std::unique_ptr<pg::Connection> db) : db_(std::move(db)) {}

PgStore::~PgStore() = default;

core::Result<std::unique_ptr<PgStore>> PgStore::Open(const std::string& conninfo) {
  GLEANER_ASSIGN_OR_RETURN(pg::Connection db, pg::Connection::Open(conninfo));
  auto store =
      std::unique_ptr<PgStore>(new PgStore(std::make_unique<pg::Connection>(std::move(db))));
  GLEANER_RETURN_IF_ERROR(pg::MigrateSchema(*store->db_, pg::LatestSchemaVersion())
                              .WithContext("PostgreSQL database at " + store->db_->target()));
  return store;
}

Status PgStore::AddRollups(const std::vector<observe::MinuteRollup>& rollups) {
  if (rollups.empty()) return Status::Ok();
  return db_->InTransaction([&]() -> Status {
    for (const observe::MinuteRollup& added : rollups) GLEANER_RETURN_IF_ERROR(AddRollup(added));
    return Status::Ok();
  });
}

core::Result<int64_t> PgStore::AddAgentMinutes(
    const std::vector<AgentMinutes>& batch,
    const std::map<std::string, std::string>& project_of_user) {
  // Statements of many rows: at each minute's end every agent sends its
  // GPUs' minutes within about a second (80,000 rows from 10,000 hosts),
  // which a round trip per row would take tens of seconds to store.
  constexpr size_t kRows = 1000;
  using Key = std::pair<std::string, int64_t>;  // (GPU, minute)
  std::vector<observe::MinuteRollup> fresh;     // the parts not stored before
  const Status done = db_->InTransaction([&]() -> Status {
    fresh.clear();
    std::vector<std::pair<const observe::MinuteRollup*, const std::string*>> sourced;
    for (const auto& [source, minutes] : batch) {
      for (const observe::MinuteRollup& m : minutes) {
        if (source.empty()) {
          fresh.push_back(m);
        } else {
          sourced.emplace_back(&m, &source);
        }
      }
    }
    // Which parts are new: those whose claim was inserted (a part sent twice
    // in one batch is inserted once).
    std::set<std::tuple<std::string, int64_t, std::string>> claimed;
    for (size_t at = 0; at < sourced.size(); at += kRows) {
      const size_t n = std::min(kRows, sourced.size() - at);
      std::vector<Param> params;
      for (size_t i = at; i < at + n; ++i) {
        params.insert(params.end(), {sourced[i].first->uuid.str(),
                                     MinuteSeconds(sourced[i].first->minute), *sourced[i].second});
      }
      GLEANER_ASSIGN_OR_RETURN(
          Rows rows, db_->Query(("INSERT INTO minute_parts (uuid, minute_s, source) VALUES " +
                                 Placeholders(n, {"", "", ""}) +
                                 " ON CONFLICT DO NOTHING RETURNING uuid, minute_s, source")
                                    .c_str(),
                                params, "recording whose GPU minutes are stored"));
      for (int r = 0; r < rows.size(); ++r) {
        claimed.emplace(rows.Text(r, 0), rows.Int(r, 1), rows.Text(r, 2));
      }
    }
    for (const auto& [m, source] : sourced) {
      if (claimed.erase({m->uuid.str(), MinuteSeconds(m->minute), *source}) > 0) {
        fresh.push_back(*m);
      }
    }
    // Each minute's new parts merged, then with what is stored (read and
    // locked, so no other writer changes it until this commits).
    std::map<Key, observe::MinuteRollup> merged;
    for (const observe::MinuteRollup& m : fresh) {
      auto [it, first] = merged.try_emplace({m.uuid.str(), MinuteSeconds(m.minute)}, m);
      if (!first) it->second = observe::MergeRollups(it->second, m);
    }
    std::vector<const observe::MinuteRollup*> order;
    for (const auto& [key, m] : merged) order.push_back(&m);
    std::set<Key> stored;
    for (size_t at = 0; at < order.size(); at += kRows) {
      const size_t n = std::min(kRows, order.size() - at);
      std::vector<Param> params;
      for (size_t i = at; i < at + n; ++i) {
        params.insert(params.end(), {order[i]->uuid.str(), MinuteSeconds(order[i]->minute)});
      }
      GLEANER_ASSIGN_OR_RETURN(Rows rows,
                               db_->Query((std::string("SELECT ") + kRollupColumns +
                                           " FROM gpu_minutes WHERE (uuid, minute_s) IN (VALUES " +
                                           Placeholders(n, {"", "::BIGINT"}) + ") FOR UPDATE")
                                              .c_str(),
                                          params, "reading GPU minutes"));
      for (observe::MinuteRollup& old : RollupsFrom(rows)) {
        const Key key{old.uuid.str(), MinuteSeconds(old.minute)};
        observe::MinuteRollup& m = merged.at(key);
        m = observe::MergeRollups(old, m);
        stored.insert(key);
      }
    }
    // Stored (and locked) minutes are overwritten with their merge; new
    // ones inserted, and any another writer inserted meanwhile merged one
    // by one.
    for (const bool existing : {true, false}) {
      std::vector<const observe::MinuteRollup*> rows_of;
      for (const auto& [key, m] : merged) {
        if (stored.contains(key) == existing) rows_of.push_back(&m);
      }
      for (size_t at = 0; at < rows_of.size(); at += kRows) {
        const size_t n = std::min(kRows, rows_of.size() - at);
        std::vector<Param> params;
        for (size_t i = at; i < at + n; ++i) {
          std::vector<Param> row = RollupParams(*rows_of[i]);
          params.insert(params.end(), row.begin(), row.end());
        }
        std::string sql = std::string("INSERT INTO gpu_minutes (") + kRollupColumns + ") VALUES " +
                          Placeholders(n, std::vector<std::string>(17)) +
                          " ON CONFLICT (uuid, minute_s) ";
        sql += existing ? R"sql(DO UPDATE SET samples = excluded.samples,
            utilization_min_pct = excluded.utilization_min_pct,
            utilization_mean_pct = excluded.utilization_mean_pct,
            utilization_max_pct = excluded.utilization_max_pct,
            memory_used_max_bytes = excluded.memory_used_max_bytes,
            power_mean_w = excluded.power_mean_w, pids = excluded.pids, users = excluded.users,
            state = excluded.state, observed_s = excluded.observed_s, busy_s = excluded.busy_s,
            idle_s = excluded.idle_s, held_idle_s = excluded.held_idle_s,
            harvested_s = excluded.harvested_s, job_users = excluded.job_users)sql"
                        : "DO NOTHING RETURNING uuid, minute_s";
        GLEANER_ASSIGN_OR_RETURN(Rows rows, db_->Query(sql.c_str(), params, "saving GPU minutes"));
        if (existing) continue;
        std::set<Key> inserted;
        for (int r = 0; r < rows.size(); ++r) inserted.emplace(rows.Text(r, 0), rows.Int(r, 1));
        for (size_t i = at; i < at + n; ++i) {
          const Key key{rows_of[i]->uuid.str(), MinuteSeconds(rows_of[i]->minute)};
          if (!inserted.contains(key)) GLEANER_RETURN_IF_ERROR(AddRollup(*rows_of[i]));
        }
      }
    }
    observe::UsageProfiles delta(project_of_user);
    for (const observe::MinuteRollup& m : fresh) delta.Add(m);
    return AddProfileRows(delta);
  });
  if (!done.ok()) return done;
  return static_cast<int64_t>(fresh.size());
}

Status PgStore::AddRollup(const observe::MinuteRollup& added) {
  // A minute already stored (gleaner restarted within it) is merged, not
  // replaced, so the minute keeps both parts. FOR UPDATE makes a writer of
  // the same minute wait and then merge with ours; when the minute is new
  // and another writer inserts it first, our insert does nothing and the
  // next round merges with theirs.
  for (;;) {
    GLEANER_ASSIGN_OR_RETURN(
        Rows stored,
        db_->Query((std::string("SELECT ") + kRollupColumns +
                    " FROM gpu_minutes WHERE uuid = $1 AND minute_s = $2 FOR UPDATE")
                       .c_str(),
                   {added.uuid.str(), MinuteSeconds(added.minute)}, "reading GPU minutes"));
    if (!stored.empty()) {
      const observe::MinuteRollup merged =
          observe::MergeRollups(RollupFromRow(Row(stored, 0)), added);
      return db_
          ->Query(R"sql(
            UPDATE gpu_minutes SET samples = $3, utilization_min_pct = $4,
              utilization_mean_pct = $5, utilization_max_pct = $6, memory_used_max_bytes = $7,
              power_mean_w = $8, pids = $9, users = $10, state = $11, observed_s = $12,
              busy_s = $13, idle_s = $14, held_idle_s = $15, harvested_s = $16, job_users = $17
            WHERE uuid = $1 AND minute_s = $2)sql",
                  RollupParams(merged), "saving GPU minutes")
          .status();
    }
    GLEANER_ASSIGN_OR_RETURN(Rows inserted, db_->Query(R"sql(
          INSERT INTO gpu_minutes (uuid, minute_s, samples, utilization_min_pct,
            utilization_mean_pct, utilization_max_pct, memory_used_max_bytes, power_mean_w, pids,
            users, state, observed_s, busy_s, idle_s, held_idle_s, harvested_s, job_users)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
          ON CONFLICT (uuid, minute_s) DO NOTHING)sql",
                                                       RollupParams(added), "saving GPU minutes"));
    if (inserted.affected() == 1) return Status::Ok();
  }
}

core::Result<std::vector<observe::MinuteRollup>> PgStore::Rollups(const core::GpuUuid& uuid,
                                                                  core::TimePoint from,
                                                                  core::TimePoint to) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows,
      db_->Query((std::string("SELECT ") + kRollupColumns +
                  " FROM gpu_minutes WHERE uuid = $1 AND minute_s >= $2"
                  " AND minute_s < $3 ORDER BY minute_s")
                     .c_str(),
                 {uuid.str(), MinuteSeconds(from), MinuteSeconds(to)}, "reading GPU minutes"));
  return RollupsFrom(rows);
}

core::Result<std::vector<observe::MinuteRollup>> PgStore::RollupsBetween(core::TimePoint from,
                                                                         core::TimePoint to) {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows, db_->Query((std::string("SELECT ") + kRollupColumns +
                             " FROM gpu_minutes WHERE minute_s >= $1 AND minute_s < $2"
                             " ORDER BY uuid, minute_s")
                                .c_str(),
                            {MinuteSeconds(from), MinuteSeconds(to)}, "reading GPU minutes"));
  return RollupsFrom(rows);
}

Status PgStore::SaveGpus(const std::vector<GpuRecord>& gpus) {
  // The last record of each GPU: one statement may not upsert a row twice.
  std::map<core::GpuUuid, const GpuRecord*> last;
  for (const GpuRecord& g : gpus) last[g.uuid] = &g;
  if (last.empty()) return Status::Ok();
  // Many rows a statement (a new leader learns thousands of hosts' GPUs at
  // once), in one transaction.
  constexpr size_t kRowsPerStatement = 1000;
  return db_->InTransaction([&]() -> Status {
    for (auto from = last.begin(); from != last.end();) {
      std::string sql =
          "INSERT INTO gpus (uuid, host, idx, name, memory_total_bytes, first_seen_us, "
          "last_seen_us) VALUES ";
      std::vector<Param> params;
      for (size_t row = 0; row < kRowsPerStatement && from != last.end(); ++row, ++from) {
        const GpuRecord& g = *from->second;
        const size_t p = params.size();
        sql += (row == 0 ? "(" : ", (");
        for (size_t col = 1; col <= 7; ++col) {
          sql += "$" + std::to_string(p + col) + (col < 7 ? ", " : ")");
        }
        params.insert(
            params.end(),
            {g.uuid.str(), g.host, static_cast<int64_t>(g.index), g.name,
             g.memory_total ? std::optional<int64_t>(static_cast<int64_t>(g.memory_total->count()))
                            : std::nullopt,
             core::ToUnixMicros(g.first_seen), core::ToUnixMicros(g.last_seen)});
      }
      sql += R"sql(
        ON CONFLICT (uuid) DO UPDATE SET host = excluded.host, idx = excluded.idx,
          name = excluded.name, memory_total_bytes = excluded.memory_total_bytes,
          last_seen_us = excluded.last_seen_us)sql";
      GLEANER_RETURN_IF_ERROR(db_->Query(sql.c_str(), params, "saving GPUs").status());
    }
    return Status::Ok();
  });
}

core::Result<std::vector<GpuRecord>> PgStore::Gpus() {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows,
      db_->Query(
          (std::string("SELECT ") + kGpuColumns + " FROM gpus ORDER BY host, idx, uuid").c_str(),
          {}, "reading GPUs"));
  std::vector<GpuRecord> out;
  out.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(GpuFromRow(Row(rows, i)));
  return out;
}

core::Result<int64_t> PgStore::ForgetGpus(const std::string& host) {
  GLEANER_ASSIGN_OR_RETURN(Rows rows, db_->Query("DELETE FROM gpus WHERE host = $1 RETURNING uuid",
                                                 {host}, "forgetting GPUs"));
  return static_cast<int64_t>(rows.size());
}

Status PgStore::SaveVerdicts(const std::vector<observe::Verdict>& verdicts) {
  if (verdicts.empty()) return Status::Ok();
  return db_->InTransaction([&]() -> Status {
    for (const observe::Verdict& v : verdicts) {
      GLEANER_RETURN_IF_ERROR(
          db_->Query(R"sql(
            INSERT INTO gpu_verdicts (uuid, verdict) VALUES ($1, $2)
            ON CONFLICT (uuid) DO UPDATE SET verdict = excluded.verdict)sql",
                     {v.uuid.str(), observe::VerdictToJson(v).dump(
                                        -1, ' ', false, nlohmann::json::error_handler_t::replace)},
                     "saving verdicts")
              .status());
    }
    return Status::Ok();
  });
}

core::Result<std::vector<observe::Verdict>> PgStore::LatestVerdicts() {
  GLEANER_ASSIGN_OR_RETURN(
      Rows rows,
      db_->Query("SELECT uuid, verdict FROM gpu_verdicts ORDER BY uuid", {}, "reading verdicts"));
  std::vector<observe::Verdict> out;
  for (int i = 0; i < rows.size(); ++i) {
    auto parsed = nlohmann::json::parse(rows.Text(i, 1), nullptr, false);
    if (parsed.is_discarded()) {
      return core::Internal("stored verdict of " + rows.Text(i, 0) + " is not JSON");
    }
    GLEANER_ASSIGN_OR_RETURN(observe::Verdict v, observe::VerdictFromJson(parsed));
    out.push_back(std::move(v));
  }
  return out;
}

Status PgStore::SavePauseModel(const std::string& host, const observe::QuietSpellModel& model) {
  return db_
      ->Query(R"sql(
        INSERT INTO pause_models (host, cells) VALUES ($1, $2)
        ON CONFLICT (host) DO UPDATE SET cells = excluded.cells)sql",
              {host, observe::PauseModelToJson(model).dump()}, "saving the pause model")
      .status();
}

core::Result<std::optional<observe::QuietSpellModel>> PgStore::PauseModel(const std::string& host) {
  GLEANER_ASSIGN_OR_RETURN(Rows rows, db_->Query("SELECT cells FROM pause_models WHERE host = $1",
                                                 {host}, "reading the pause model"));
  if (rows.size() == 0) return std::optional<observe::QuietSpellModel>();
  return PauseModelFromRow(host, rows.Text(0, 0));
}

Status PgStore::AddToProfiles(const observe::UsageProfiles& delta) {
  return db_->InTransaction([&] { return AddProfileRows(delta); });
}

Status PgStore::AddProfileRows(const observe::UsageProfiles& delta) {
  // A thousand rows a statement: a minute of 10,000 hosts touches a row
  // for each of their 80,000 GPUs.
  constexpr size_t kRows = 1000;
  std::vector<Param> params;
  const auto flush = [&]() -> Status {
    if (params.empty()) return Status::Ok();
    const std::string sql =
        "INSERT INTO usage_profiles (kind, key, hour_of_week, busy_s, observed_s) VALUES " +
        Placeholders(params.size() / 5, {"", "", "", "", ""}) + R"sql(
        ON CONFLICT (kind, key, hour_of_week) DO UPDATE SET
          busy_s = usage_profiles.busy_s + excluded.busy_s,
          observed_s = usage_profiles.observed_s + excluded.observed_s)sql";
    const Status s = db_->Query(sql.c_str(), params, "saving usage profiles").status();
    params.clear();
    return s;
  };
  GLEANER_RETURN_IF_ERROR(ForEachProfileRow(delta, [&](const ProfileRow& r) {
    params.insert(params.end(), {r.kind, r.key, r.hour_of_week, r.busy_s, r.observed_s});
    return params.size() >= 5 * kRows ? flush() : Status::Ok();
  }));
  return flush();
}

core::Result<std::map<std::string, observe::HourOfWeekProfile>> PgStore::ProfileRows(
    const std::string& kind) {
  GLEANER_ASSIGN_OR_RETURN(Rows rows, db_->Query(R"sql(
    SELECT key, hour_of_week, busy_s, observed_s FROM usage_profiles WHERE kind = $1
    ORDER BY key, hour_of_week)sql",
                                                 {kind}, "reading usage profiles"));
  std::map<std::string, observe::HourOfWeekProfile> out;
  for (int i = 0; i < rows.size(); ++i) {
    const auto h = static_cast<size_t>(rows.Int(i, 1));
    if (h >= static_cast<size_t>(observe::kHoursPerWeek)) continue;
    observe::HourOfWeekProfile& p = out[rows.Text(i, 0)];
    p.busy_s[h] = rows.Real(i, 2);
    p.observed_s[h] = rows.Real(i, 3);
  }
  return out;
}

core::Result<std::map<std::string, observe::HourOfWeekProfile>> PgStore::Profiles(
    const std::string& kind) {
  return ProfilesOfKind(kind, [this](const std::string& k) { return ProfileRows(k); });
}

core::Result<int64_t> PgStore::PruneRollups(core::TimePoint before) {
  GLEANER_ASSIGN_OR_RETURN(Rows deleted,
                           db_->Query("DELETE FROM gpu_minutes WHERE minute_s < $1",
                                      {MinuteSeconds(before)}, "pruning GPU minutes"));
  GLEANER_RETURN_IF_ERROR(db_->Query("DELETE FROM minute_parts WHERE minute_s < $1",
                                     {MinuteSeconds(before)}, "pruning GPU minutes")
                              .status());
  return deleted.affected();
}

}  // namespace gleaner::store
