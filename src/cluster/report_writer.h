#pragma once

#include <map>
#include <string>
#include <vector>

#include "cluster/log.h"
#include "core/group_commit.h"
#include "core/status.h"
#include "observe/minute_rollup.h"
#include "store/observation_store.h"

// What an agent's report brings that only the store keeps (its host's GPU
// records when it sends a new inventory, and its minutes), written outside
// the coordinator's lock: no tick and no other report waits for it.
namespace gleaner::cluster {

struct ReportWrites {
  std::string run;  // AgentReport::run: a minute sent again counts once
  std::vector<store::GpuRecord> gpus;
  std::vector<observe::MinuteRollup> minutes;
};

// Writes reports to one store connection of their own, a batch at a time
// (core::GroupCommit): 10,000 agents send their minutes within a second of
// each minute; one transaction takes them all. Thread-safe; `to` must outlive
// it; failures are said to `log`.
class ReportWriter {
 public:
  ReportWriter(store::ObservationStore& to, std::map<std::string, std::string> project_of_user,
               const Log& log);

  // Returns once `writes` is in the store, or with why its minutes are
  // not (GPU records that fail are only logged); the agent then sends its
  // report again, which changes nothing twice.
  core::Status Write(const ReportWrites& writes) { return batches_.Submit(&writes); }

  // One batch, in two transactions (GPU records, then minutes), on `to`
  // with no batching: for a coordinator whose reports share its own
  // connection. The status for each of `batch`, in order.
  static std::vector<core::Status> WriteBatch(
      store::ObservationStore& to, const std::vector<const ReportWrites*>& batch,
      const std::map<std::string, std::string>& project_of_user, const Log& log);

 private:
  core::GroupCommit<const ReportWrites*, core::Status> batches_;
};

}  // namespace gleaner::cluster
