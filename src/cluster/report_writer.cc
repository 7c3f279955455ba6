#include "cluster/report_writer.h"

#include <exception>

namespace gleaner::cluster {

core::Status ReportWriter::Write(const ReportWrites& writes, const Log& log) {
  Queued mine{&writes};
  core::MutexLock lock(mu_);
  queued_.push_back(&mine);
  while (!mine.done) {
    if (writing_) {
      mu_.Await(written_);
      continue;
    }
    // No batch under way: this report writes what every report queued so
    // far, its own among them, while the next ones queue.
    std::vector<Queued*> batch = std::exchange(queued_, {});
    writing_ = true;
    lock.Unlock();
    std::vector<const ReportWrites*> reports;
    for (const Queued* q : batch) reports.push_back(q->writes);
    std::vector<core::Status> statuses;
    try {
      statuses = WriteBatch(to_, reports, project_of_user_, log);
    } catch (const std::exception& e) {
      // The batch learns why, and the next one can proceed: a batch left
      // "under way" would stall every later report.
      statuses.assign(batch.size(),
                      core::Internal(std::string("storing the report failed: ") + e.what()));
    }
    lock.Lock();
    writing_ = false;
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->status = statuses[i];
      batch[i]->done = true;
    }
    written_.notify_all();
  }
  return mine.status;
}

std::vector<core::Status> ReportWriter::WriteBatch(
    store::ObservationStore& to, const std::vector<const ReportWrites*>& batch,
    const std::map<std::string, std::string>& project_of_user, const Log& log) {
  std::vector<core::Status> statuses(batch.size(), core::Status::Ok());
  std::vector<store::GpuRecord> gpus;
  for (const ReportWrites* w : batch) gpus.insert(gpus.end(), w->gpus.begin(), w->gpus.end());
  if (!gpus.empty()) {
    if (auto s = to.SaveGpus(gpus); !s.ok()) log("gpus: " + s.message());
  }
  // The cluster's usage profiles grow from the same minutes; a minute sent
  // again (the agent heard no answer) counts once.
  std::vector<store::AgentMinutes> minutes;
  for (const ReportWrites* w : batch) {
    if (!w->minutes.empty()) minutes.push_back({w->run, w->minutes});
  }
  if (minutes.empty()) return statuses;
  const core::Status added = to.AddAgentMinutes(minutes, project_of_user).status();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!batch[i]->minutes.empty()) statuses[i] = added;
  }
  return statuses;
}

}  // namespace gleaner::cluster
