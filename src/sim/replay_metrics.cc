#include "sim/replay_metrics.h"

#include <algorithm>

namespace gleaner::sim {

Summary Summarize(std::vector<int64_t> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  // Integer sum first: the mean does not depend on summation order.
  int64_t total = 0;
  for (int64_t x : v) total += x;
  const size_t n = v.size();
  s.mean_s = static_cast<double>(total) / static_cast<double>(n);
  s.median_s = n % 2 == 1 ? static_cast<double>(v[n / 2])
                          : static_cast<double>(v[n / 2 - 1] + v[n / 2]) / 2.0;
  const size_t rank = (n * 99 + 99) / 100;  // ceil(0.99 n), at least 1
  s.p99_s = static_cast<double>(v[rank - 1]);
  return s;
}

void AddSummaryJson(nlohmann::ordered_json& j, const std::string& name, const Summary& s) {
  j["mean_" + name + "_s"] = s.mean_s;
  j["median_" + name + "_s"] = s.median_s;
  j["p99_" + name + "_s"] = s.p99_s;
}

ReplayMetrics ComputeReplayMetrics(const std::vector<TraceJob>& jobs, const ReplayResult& r,
                                   int cluster_gpus) {
  ReplayMetrics m;
  m.jobs = static_cast<int64_t>(jobs.size());
  std::vector<int64_t> jct;
  std::vector<int64_t> queue;
  jct.reserve(jobs.size());
  queue.reserve(jobs.size());
  int64_t first = INT64_MAX;
  int64_t last = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const TraceJob& j = jobs[i];
    const JobOutcome& o = r.outcomes[i];
    jct.push_back(o.end_s - j.submit_s);
    queue.push_back(o.start_s - j.submit_s);
    first = std::min(first, j.submit_s);
    last = std::max(last, o.end_s);
    m.gpu_seconds += (o.end_s - o.start_s) * j.gpus;
  }
  m.jct = Summarize(std::move(jct));
  m.queue = Summarize(std::move(queue));
  m.makespan_s = jobs.empty() ? 0 : last - first;
  if (m.makespan_s > 0 && cluster_gpus > 0) {
    m.utilization = static_cast<double>(m.gpu_seconds) /
                    (static_cast<double>(cluster_gpus) * static_cast<double>(m.makespan_s));
  }
  m.cost = r.cost;
  for (const ReplaySample& s : r.timeline) {
    m.peak_busy_gpus = std::max(m.peak_busy_gpus, s.busy_gpus);
    m.peak_queued_jobs = std::max(m.peak_queued_jobs, s.queued_jobs);
  }
  return m;
}

nlohmann::ordered_json ReplayMetricsJson(const ReplayIdentity& id, const ReplayMetrics& m) {
  nlohmann::ordered_json j;
  j["trace"] = id.trace;
  j["policy"] = id.policy;
  j["gpus"] = id.gpus;
  j["gpus_per_node"] = id.gpus_per_node;
  j["seed"] = id.seed;
  j["jobs"] = m.jobs;
  j["skipped_rows"] = id.skipped_rows;
  if (id.left_out) {
    j["left_out_without_gpus"] = id.left_out->without_gpus;
    j["left_out_never_scheduled"] = id.left_out->never_scheduled;
  }
  j["makespan_s"] = m.makespan_s;
  AddSummaryJson(j, "jct", m.jct);
  AddSummaryJson(j, "queue", m.queue);
  j["utilization"] = m.utilization;
  j["gpu_seconds"] = m.gpu_seconds;
  j["peak_busy_gpus"] = m.peak_busy_gpus;
  j["peak_queued_jobs"] = m.peak_queued_jobs;
  j["multi_node_gangs_started"] = id.gangs_started;
  if (id.left_out_without_a_node) j["left_out_without_a_node"] = *id.left_out_without_a_node;
  if (m.cost) {
    j["cost_aware"] = id.cost_aware;
    nlohmann::ordered_json cost;
    cost["currency"] = "USD";
    cost["gpu_hour_cost"] = m.cost->gpu_hour_cost;
    cost["work_a100_hours"] = m.cost->work_a100_hours;
    cost["cost_per_a100_hour"] =
        m.cost->work_a100_hours > 0 ? m.cost->gpu_hour_cost / m.cost->work_a100_hours : 0;
    cost["gpu_hours_by_model"] = m.cost->gpu_hours_by_model;
    cost["unpriced_jobs"] = m.cost->unpriced_jobs;
    j["cost"] = std::move(cost);
  }
  return j;
}

}  // namespace gleaner::sim
