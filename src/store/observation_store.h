#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "observe/minute_rollup.h"
#include "observe/quiet_spell_model.h"
#include "observe/usage_profile.h"
#include "observe/verdict.h"

namespace gleaner::store {

// A GPU as last seen: what its minutes are priced and labelled by.
struct GpuRecord {
  core::GpuUuid uuid;
  std::string host;
  uint32_t index = 0;
  std::string name;  // the driver's, "NVIDIA H100 80GB HBM3"
  std::optional<core::Bytes> memory_total;
  core::TimePoint first_seen;
  core::TimePoint last_seen;

  bool operator==(const GpuRecord&) const = default;
};

// Minutes from one source: an agent's run (AgentReport::run).
struct AgentMinutes {
  std::string source;
  std::vector<observe::MinuteRollup> minutes;
};

// Where observations outlive the process: minute roll-ups (history, kept
// for the retention period), each GPU's latest verdict, and the usage
// profiles. Implementations are safe to use from one thread at a time.
class ObservationStore {
 public:
  virtual ~ObservationStore() = default;

  // Roll-ups are keyed by (GPU, minute); adding one for a minute already
  // stored merges the two (observe::MergeRollups).
  virtual core::Status AddRollups(const std::vector<observe::MinuteRollup>& rollups) = 0;
  // Agents' minutes, each part added once, in one transaction: a (GPU,
  // minute) that holds a part from the same source already is left as it
  // is, so a report sent again (its answer lost, or sent on to a new
  // leader) counts nothing twice; minutes of an empty source are merged
  // every time (AddRollups). The new ones are added to the usage profiles
  // as well (by `project_of_user`). Returns how many were new.
  virtual core::Result<int64_t> AddAgentMinutes(
      const std::vector<AgentMinutes>& batch,
      const std::map<std::string, std::string>& project_of_user) = 0;
  virtual core::Result<std::vector<observe::MinuteRollup>> Rollups(const core::GpuUuid& uuid,
                                                                   core::TimePoint from,
                                                                   core::TimePoint to) = 0;

  // Every GPU's minutes in [from, to), by GPU and then minute.
  virtual core::Result<std::vector<observe::MinuteRollup>> RollupsBetween(core::TimePoint from,
                                                                          core::TimePoint to) = 0;

  // Records GPUs as seen: a GPU already known keeps its first_seen; the
  // rest is replaced.
  virtual core::Status SaveGpus(const std::vector<GpuRecord>& gpus) = 0;
  virtual core::Result<std::vector<GpuRecord>> Gpus() = 0;
  // Forgets the GPUs recorded on `host` (an admin's `gleaner host
  // forget`): another host may then report them as its own. How many.
  virtual core::Result<int64_t> ForgetGpus(const std::string& host) = 0;

  // Replaces each GPU's latest verdict.
  virtual core::Status SaveVerdicts(const std::vector<observe::Verdict>& verdicts) = 0;
  virtual core::Result<std::vector<observe::Verdict>> LatestVerdicts() = 0;

  // What a host's idle classifier learned about pauses, so that a restart
  // does not start from no opinion; nullopt when none was saved.
  virtual core::Status SavePauseModel(const std::string& host,
                                      const observe::QuietSpellModel& model) = 0;
  virtual core::Result<std::optional<observe::QuietSpellModel>> PauseModel(
      const std::string& host) = 0;

  // Adds `delta` (profiles accumulated since the last call) to the stored ones.
  virtual core::Status AddToProfiles(const observe::UsageProfiles& delta) = 0;
  // kind: "gpu", "user" or "project" (whose observed time is the host's
  // GPU-time), or "host" (key "all": GPU-time observed on all GPUs).
  virtual core::Result<std::map<std::string, observe::HourOfWeekProfile>> Profiles(
      const std::string& kind) = 0;

  // Deletes roll-ups of minutes before `before`; returns how many.
  virtual core::Result<int64_t> PruneRollups(core::TimePoint before) = 0;
};

}  // namespace gleaner::store
