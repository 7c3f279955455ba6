#pragma once

#include <condition_variable>
#include <map>
#include <string>
#include <vector>

#include "cluster/log.h"
#include "core/mutex.h"
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
// (group commit): a report waits for the batch under way, if any, then
// writes everything queued meanwhile, its own among them. 10,000 agents
// send their minutes within a second of each minute; one transaction takes
// them all. Thread-safe; `to` must outlive it.
class ReportWriter {
 public:
  ReportWriter(store::ObservationStore& to, std::map<std::string, std::string> project_of_user)
      : to_(to), project_of_user_(std::move(project_of_user)) {}

  // Returns once `writes` is in the store, or with why its minutes are
  // not (GPU records that fail are only logged); the agent then sends its
  // report again, which changes nothing twice.
  core::Status Write(const ReportWrites& writes, const Log& log) GLEANER_EXCLUDES(mu_);

  // One batch, in two transactions (GPU records, then minutes), on `to`
  // with no batching: for a coordinator whose reports share its own
  // connection. The status for each of `batch`, in order.
  static std::vector<core::Status> WriteBatch(
      store::ObservationStore& to, const std::vector<const ReportWrites*>& batch,
      const std::map<std::string, std::string>& project_of_user, const Log& log);

 private:
  struct Queued {
    const ReportWrites* writes;
    core::Status status = core::Status::Ok();
    bool done = false;
  };

  store::ObservationStore& to_;
  const std::map<std::string, std::string> project_of_user_;
  core::Mutex mu_;
  std::condition_variable written_;
  std::vector<Queued*> queued_ GLEANER_GUARDED_BY(mu_);  // waiting for the next batch
  bool writing_ GLEANER_GUARDED_BY(mu_) = false;         // a batch is being written
};

}  // namespace gleaner::cluster
