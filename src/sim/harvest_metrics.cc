#include "sim/harvest_metrics.h"

#include <map>

namespace gleaner::sim {
namespace {

double Hours(int64_t gpu_s) { return static_cast<double>(gpu_s) / 3600.0; }

}  // namespace

HarvestMetrics ComputeHarvestMetrics(const std::string& policy, bool checkpoints,
                                     const std::vector<HarvestJob>& queue, const HarvestResult& r) {
  HarvestMetrics m;
  m.policy = policy;
  m.checkpoints = checkpoints;
  m.harvested_gpu_hours = Hours(r.harvested_gpu_s);
  m.harvested_idle_gpu_hours = Hours(r.harvested_idle_gpu_s);
  m.harvested_share_of_idle = r.idle_gpu_s > 0 ? static_cast<double>(r.harvested_idle_gpu_s) /
                                                     static_cast<double>(r.idle_gpu_s)
                                               : 0;
  m.lost_gpu_hours = Hours(r.lost_gpu_s);
  m.useful_gpu_hours = Hours(r.harvested_gpu_s - r.lost_gpu_s);
  m.preemptions = r.preemptions;
  m.owner_returns = r.owner_returns;
  m.owner_delay_gpu_hours = Hours(r.owner_delay_gpu_s);
  m.owner_delay_per_return_s = r.owner_returns > 0 ? static_cast<double>(r.owner_delay_gpu_s) /
                                                         static_cast<double>(r.owner_returns)
                                                   : 0;
  m.shared_gpu_hours = Hours(r.shared_gpu_s);
  m.parked_gpu_hours = Hours(r.parked_gpu_s);
  m.holder_oom_risk_minutes = r.holder_oom_risk_minutes;
  m.parks = r.parks;
  m.restores = r.restores;
  m.restore_wait_mean_s =
      r.restores > 0 ? static_cast<double>(r.restore_wait_s) / static_cast<double>(r.restores) : 0;
  m.samples = r.samples;
  std::vector<int64_t> jct, wait;
  // Integer GPU-seconds per user: sums that do not depend on order.
  std::map<std::string, std::pair<int64_t, int64_t>> done_and_asked;
  for (size_t j = 0; j < queue.size(); ++j) {
    const HarvestJob& h = queue[j];
    const HarvestJobOutcome& o = r.jobs[j];
    auto& [done, asked] = done_and_asked[h.user];
    asked += h.work_s * h.gpus;
    if (o.rejected) {
      ++m.jobs_rejected;
      continue;
    }
    if (o.first_start_s >= 0) wait.push_back(o.first_start_s - h.submit_s);
    if (o.end_s >= 0) {
      ++m.jobs_finished;
      jct.push_back(o.end_s - h.submit_s);
      done += h.work_s * h.gpus;
    } else {
      ++m.jobs_unfinished;
    }
  }
  m.jct = Summarize(std::move(jct));
  m.queue = Summarize(std::move(wait));
  if (done_and_asked.size() >= 2) {
    double sum = 0, squares = 0;
    for (const auto& [user, da] : done_and_asked) {
      const double x =
          da.second > 0 ? static_cast<double>(da.first) / static_cast<double>(da.second) : 0;
      sum += x;
      squares += x * x;
    }
    const double n = static_cast<double>(done_and_asked.size());
    if (squares > 0) m.jain_fairness = sum * sum / (n * squares);
  }
  return m;
}

HarvestLimit LimitOf(const HarvestResult& r) {
  return {Hours(r.idle_gpu_s), Hours(r.held_idle_gpu_s), Hours(r.owner_busy_gpu_s),
          Hours(r.no_data_gpu_s)};
}

nlohmann::ordered_json HarvestMetricsJson(const HarvestMetrics& m) {
  nlohmann::ordered_json j;
  j["policy"] = m.policy;
  j["checkpoints"] = m.checkpoints;
  j["harvested_gpu_hours"] = m.harvested_gpu_hours;
  j["harvested_idle_gpu_hours"] = m.harvested_idle_gpu_hours;
  j["harvested_share_of_idle"] = m.harvested_share_of_idle;
  j["useful_gpu_hours"] = m.useful_gpu_hours;
  j["lost_gpu_hours"] = m.lost_gpu_hours;
  j["preemptions"] = m.preemptions;
  j["owner_returns"] = m.owner_returns;
  j["owner_delay_gpu_hours"] = m.owner_delay_gpu_hours;
  j["owner_delay_per_return_s"] = m.owner_delay_per_return_s;
  j["jobs_finished"] = m.jobs_finished;
  j["jobs_unfinished"] = m.jobs_unfinished;
  j["jobs_rejected"] = m.jobs_rejected;
  AddSummaryJson(j, "jct", m.jct);
  AddSummaryJson(j, "queue", m.queue);
  j["jain_fairness"] = m.jain_fairness ? nlohmann::ordered_json(*m.jain_fairness) : nullptr;
  j["shared_gpu_hours"] = m.shared_gpu_hours;
  j["parked_gpu_hours"] = m.parked_gpu_hours;
  j["holder_oom_risk_minutes"] = m.holder_oom_risk_minutes;
  j["parks"] = m.parks;
  j["restores"] = m.restores;
  j["restore_wait_mean_s"] = m.restore_wait_mean_s;
  j["classifier_samples"] = m.samples;
  return j;
}

}  // namespace gleaner::sim
