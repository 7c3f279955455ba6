#include "sim/replay_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/format.h"
#include "sim/svg_chart.h"

namespace gleaner::sim {
namespace {

constexpr int kSlices = 400;  // points per time chart

// Time-weighted means of busy GPUs and queued jobs over kSlices equal
// slices of [t0, t1), from the step function in the timeline.
void Slice(const std::vector<ReplaySample>& tl, int64_t t0, int64_t t1, std::vector<double>* busy,
           std::vector<double>* queued) {
  busy->assign(kSlices, 0);
  queued->assign(kSlices, 0);
  const double width = static_cast<double>(t1 - t0) / kSlices;
  if (width <= 0) return;
  for (size_t i = 0; i < tl.size(); ++i) {
    const double a = static_cast<double>(std::max(tl[i].t_s, t0) - t0);
    const double b = static_cast<double>((i + 1 < tl.size() ? tl[i + 1].t_s : t1) - t0);
    if (b <= a) continue;
    for (int k = static_cast<int>(a / width); k < kSlices && k * width < b; ++k) {
      const double lo = std::max(a, k * width);
      const double hi = std::min(b, (k + 1) * width);
      if (hi <= lo) continue;
      (*busy)[static_cast<size_t>(k)] += tl[i].busy_gpus * (hi - lo) / width;
      (*queued)[static_cast<size_t>(k)] += tl[i].queued_jobs * (hi - lo) / width;
    }
  }
}

ChartTicks TimeTicks(int64_t span_s) {
  ChartTicks t;
  for (int i = 0; i <= 4; ++i) {
    t.emplace_back(i / 4.0, HumanDuration(static_cast<double>(span_s) * i / 4.0));
  }
  return t;
}

}  // namespace

std::string RenderReplayReport(const std::vector<TraceJob>& jobs, const ReplayResult& r,
                               const ReplayIdentity& id, const ReplayMetrics& m) {
  int64_t t0 = INT64_MAX;
  for (const TraceJob& j : jobs) t0 = std::min(t0, j.submit_s);
  if (jobs.empty()) t0 = 0;
  const int64_t t1 = t0 + m.makespan_s;
  std::vector<double> busy, queued;
  Slice(r.timeline, t0, t1, &busy, &queued);

  LineChart util{"GPU utilization over time (share of " + std::to_string(id.gpus) +
                     " GPUs held by jobs; mean per 1/" + std::to_string(kSlices) + " of the run)",
                 {ChartLine{}},
                 TimeTicks(m.makespan_s),
                 {},
                 true};
  std::vector<ChartPoint>& util_points = util.lines[0].points;
  for (int k = 0; k < kSlices; ++k) {
    util_points.push_back(
        {static_cast<double>(k) / kSlices, busy[static_cast<size_t>(k)] / id.gpus});
  }
  util_points.push_back({1.0, util_points.empty() ? 0 : util_points.back().y});
  for (int i = 0; i <= 4; ++i) util.y_ticks.emplace_back(i / 4.0, std::to_string(i * 25) + " %");

  double qmax = 1;
  for (double q : queued) qmax = std::max(qmax, q);
  qmax = std::ceil(qmax / 4) * 4;  // whole jobs at each of the 4 tick steps
  LineChart queue{
      "Jobs waiting over time (mean per slice)", {ChartLine{}}, TimeTicks(m.makespan_s), {}, true};
  std::vector<ChartPoint>& queue_points = queue.lines[0].points;
  for (int k = 0; k < kSlices; ++k) {
    queue_points.push_back(
        {static_cast<double>(k) / kSlices, queued[static_cast<size_t>(k)] / qmax});
  }
  queue_points.push_back({1.0, queue_points.empty() ? 0 : queue_points.back().y});
  for (int i = 0; i <= 4; ++i)
    queue.y_ticks.emplace_back(i / 4.0, core::FormatFixed(qmax * i / 4.0, 0));

  std::vector<int64_t> jct;
  jct.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) jct.push_back(r.outcomes[i].end_s - jobs[i].submit_s);
  const LineChart cdf = DurationCdf("CDF of job completion times (arrival to end; log axis)",
                                    {ChartLine{}}, {std::move(jct)});

  const std::string title = "gleaner sim replay: " + id.trace + ", " + id.policy + ", " +
                            std::to_string(id.gpus) + " GPUs";
  std::string h = ReportPageStart(title);
  const std::string cluster = id.left_out_without_a_node
                                  ? "nodes of several GPU models"
                                  : std::to_string(id.gpus / id.gpus_per_node) + " nodes of " +
                                        std::to_string(id.gpus_per_node) + " GPUs";
  h += "<p>" + std::to_string(m.jobs) + " jobs on " + cluster + "; policy <b>" +
       EscapeHtml(id.policy) + "</b>; seed " + std::to_string(id.seed) + "; " +
       std::to_string(id.skipped_rows) + " dirty rows skipped";
  if (id.left_out) {
    h += "; left out: " + std::to_string(id.left_out->without_gpus) + " pods without GPUs, " +
         std::to_string(id.left_out->never_scheduled) + " never scheduled";
  }
  h += ".</p>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    h += "<tr><th>" + EscapeHtml(k) + "</th><td>" + EscapeHtml(v) + "</td></tr>\n";
  };
  row("makespan", HumanDuration(static_cast<double>(m.makespan_s)) + " (" +
                      std::to_string(m.makespan_s) + " s)");
  row("utilization", core::FormatFixed(100 * m.utilization, 2) + " %");
  row("completion time mean / median / p99", HumanDuration(m.jct.mean_s) + " / " +
                                                 HumanDuration(m.jct.median_s) + " / " +
                                                 HumanDuration(m.jct.p99_s));
  row("queueing time mean / median / p99", HumanDuration(m.queue.mean_s) + " / " +
                                               HumanDuration(m.queue.median_s) + " / " +
                                               HumanDuration(m.queue.p99_s));
  row("peak GPUs busy / jobs waiting",
      std::to_string(m.peak_busy_gpus) + " / " + std::to_string(m.peak_queued_jobs));
  if (id.gangs_started > 0)
    row("multi-node jobs started as gangs", std::to_string(id.gangs_started));
  h += "</table>\n" + RenderLineChart(util) + RenderLineChart(queue) + RenderLineChart(cdf) +
       "</body></html>\n";
  return h;
}

}  // namespace gleaner::sim
