#include "cluster/report_writer.h"

#include <exception>

namespace gleaner::cluster {

ReportWriter::ReportWriter(store::ObservationStore& to,
                           std::map<std::string, std::string> project_of_user, const Log& log)
    : batches_(
          [&to, project_of_user = std::move(project_of_user),
           log](std::vector<const ReportWrites**>& batch) {
            std::vector<const ReportWrites*> reports;
            for (const ReportWrites** w : batch) reports.push_back(*w);
            return WriteBatch(to, reports, project_of_user, log);
          },
          [](const std::exception& e) {
            return core::Internal(std::string("storing the report failed: ") + e.what());
          }) {}

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
