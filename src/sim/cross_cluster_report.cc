// report.html of the cross-cluster study (RenderCrossClusterReport in
// sim/cross_cluster.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "core/format.h"
#include "sim/cross_cluster.h"
#include "sim/svg_chart.h"
#include "sim/trace_csv.h"

namespace gleaner::sim {
namespace {

constexpr int64_t kSecondsPerHour = 3600;
constexpr int64_t kSecondsPerDay = 86400;

// GPU-hours for a table: whole hours, one decimal below 100.
std::string Hours(int64_t gpu_minutes) {
  const double hours = static_cast<double>(gpu_minutes) / 60;
  return core::FormatFixed(hours, hours < 100 ? 1 : 0);
}

double GpuHours(int64_t gpu_minutes) { return static_cast<double>(gpu_minutes) / 60; }

std::string Percent(int64_t part, int64_t whole) {
  return whole > 0 ? core::FormatFixed(
                         100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) +
                         " %"
                   : "-";
}

// Per-hour means of pending and lendable GPUs, one point per hour that has
// aligned minutes, at the hour's middle.
LineChart HourlyChart(const CrossClusterStudy& s) {
  std::map<int64_t, std::array<int64_t, 3>> hours;  // hour -> minutes, pending, lendable
  for (const CrossMinute& m : s.minutes) {
    auto& h = hours[m.t_s / kSecondsPerHour];
    h[0] += 1;
    h[1] += m.pending_gpus;
    h[2] += m.lendable_gpus;
  }
  LineChart c;
  c.title = "Pending GPUs and those other VCs' idle GPUs could have taken (mean per hour)";
  if (hours.empty()) return c;
  const int64_t h0 = hours.begin()->first;
  const double span_h = static_cast<double>(hours.rbegin()->first - h0 + 1);
  double top = 0;
  for (const auto& [h, v] : hours) {
    top = std::max(top, static_cast<double>(v[1]) / static_cast<double>(v[0]));
  }
  top = NiceTop(top, 1);
  ChartLine pending{{}, "line", "pending GPUs"};
  ChartLine lendable{{}, "line2", "could run on other VCs' idle GPUs"};
  for (const auto& [h, v] : hours) {
    const double x = (static_cast<double>(h - h0) + 0.5) / span_h;
    const double minutes = static_cast<double>(v[0]);
    pending.points.push_back({x, static_cast<double>(v[1]) / minutes / top});
    lendable.points.push_back({x, static_cast<double>(v[2]) / minutes / top});
  }
  c.lines = {pending, lendable};
  // A date at each midnight, every few days: about six labels.
  const int64_t first_day = (h0 * kSecondsPerHour + kSecondsPerDay - 1) / kSecondsPerDay;
  const int64_t last_day = (hours.rbegin()->first + 1) * kSecondsPerHour / kSecondsPerDay;
  const int64_t step = std::max<int64_t>(1, (last_day - first_day + 5) / 6);
  for (int64_t d = first_day; d <= last_day; d += step) {
    const double x = static_cast<double>(d * kSecondsPerDay / kSecondsPerHour - h0) / span_h;
    if (x > 1) break;
    c.x_ticks.emplace_back(x, FormatDateTime(d * kSecondsPerDay).substr(0, 10));
  }
  c.y_ticks = YTicks(top, 0);
  return c;
}

BarChart PerVcChart(const CrossClusterStudy& s) {
  BarChart c;
  c.title =
      "GPU-hours each VC could have borrowed (its pending GPUs on others' idle GPUs) and lent";
  c.series_labels = {"borrowed", "lent"};
  c.series_classes = {"bar1", "bar2"};
  double top = 0;
  for (const CrossVcTotals& vc : s.vcs) {
    top = std::max({top, GpuHours(vc.borrow_gpu_minutes), GpuHours(vc.lend_gpu_minutes)});
  }
  top = NiceTop(top, 1);
  for (const CrossVcTotals& vc : s.vcs) {
    c.groups.push_back(
        {vc.name, {GpuHours(vc.borrow_gpu_minutes) / top, GpuHours(vc.lend_gpu_minutes) / top}});
  }
  c.y_ticks = YTicks(top, 0);
  return c;
}

}  // namespace

std::string RenderCrossClusterReport(const CrossClusterStudy& s) {
  const int64_t minutes = static_cast<int64_t>(s.minutes.size());
  const std::string title =
      "gleaner sim cross-cluster: " + std::to_string(s.vcs.size()) + " virtual clusters";
  std::string h = ReportPageStart(
      title,
      ".line2{fill:none;stroke:#d9822b;stroke-width:1.5}.bar1{fill:#1f6fb2}.bar2{fill:#d9822b}"
      "p.note{color:#555}");
  int64_t gpus = 0;
  std::string names;
  for (const CrossVcTotals& vc : s.vcs) {
    gpus += vc.gpus;
    names += (names.empty() ? "" : ", ") + vc.name;
  }
  h += "<p>" + std::to_string(s.vcs.size()) + " VCs (" + EscapeHtml(names) + "), " +
       std::to_string(gpus) + " GPUs; " + std::to_string(minutes) + " minutes present in every VC";
  if (minutes > 0) {
    h += ", " + FormatDateTime(s.minutes.front().t_s) + " to " +
         FormatDateTime(s.minutes.back().t_s);
  }
  h += "; " + std::to_string(s.minutes_dropped_unaligned) +
       " minutes missing from some VC left out; " + std::to_string(s.duplicate_times) +
       " duplicate times and " + std::to_string(s.bad_rows_skipped) +
       " dirty rows skipped.</p>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    h += "<tr><th>" + EscapeHtml(k) + "</th><td>" + EscapeHtml(v) + "</td></tr>\n";
  };
  row("minutes with pending GPUs in one VC and idle GPUs in another",
      Percent(s.minutes_pending_beside_idle, minutes));
  row("pending GPU-hours", Hours(s.pending_gpu_minutes));
  row("of which could have run on other VCs' idle GPUs",
      Hours(s.lendable_gpu_minutes) + " (" +
          Percent(s.lendable_gpu_minutes, s.pending_gpu_minutes) + ")");
  row("pending GPU-hours of small jobs (< 8 GPUs)", Hours(s.pending_small_gpu_minutes));
  row("of which could have run on other VCs' idle GPUs",
      Hours(s.lendable_small_gpu_minutes) + " (" +
          Percent(s.lendable_small_gpu_minutes, s.pending_small_gpu_minutes) + ")");
  row("idle GPU-hours (the physical limit)", Hours(s.idle_gpu_minutes));
  const auto mean = [&](int64_t gpu_minutes) {
    return minutes > 0 ? core::FormatFixed(
                             static_cast<double>(gpu_minutes) / static_cast<double>(minutes), 2)
                       : "-";
  };
  row("mean pending GPUs: as recorded / with lending",
      mean(s.pending_gpu_minutes) + " / " + mean(s.pending_gpu_minutes - s.lendable_gpu_minutes));
  row("pending GPU-hours: as recorded / with lending",
      Hours(s.pending_gpu_minutes) + " / " + Hours(s.pending_gpu_minutes - s.lendable_gpu_minutes) +
          " (" + Percent(s.lendable_gpu_minutes, s.pending_gpu_minutes) + " less)");
  h += "</table>\n<p class=\"note\">An upper bound: a pending GPU counts as runnable on any idle "
       "GPU of another VC in the same minute. It ignores gang shapes across nodes, network "
       "locality, and that lent GPUs' owners may want them back. By Little's law, at the same "
       "arrival of GPU demand, the mean wait of a pending GPU falls by the same share as the mean "
       "number pending.</p>\n";
  h += RenderLineChart(HourlyChart(s)) + RenderBarChart(PerVcChart(s));
  h += "<table>\n<tr><th>VC</th><th>GPUs</th><th>pending GPU-h</th><th>idle GPU-h</th>"
       "<th>borrowed GPU-h</th><th>lent GPU-h</th></tr>\n";
  for (const CrossVcTotals& vc : s.vcs) {
    h += "<tr><th>" + EscapeHtml(vc.name) + "</th><td>" + std::to_string(vc.gpus) + "</td><td>" +
         Hours(vc.pending_gpu_minutes) + "</td><td>" + Hours(vc.idle_gpu_minutes) + "</td><td>" +
         Hours(vc.borrow_gpu_minutes) + "</td><td>" + Hours(vc.lend_gpu_minutes) + "</td></tr>\n";
  }
  h += "</table>\n</body></html>\n";
  return h;
}

}  // namespace gleaner::sim
