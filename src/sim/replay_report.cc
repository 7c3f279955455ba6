#include "sim/replay_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gleaner::sim {
namespace {

constexpr int kSlices = 400;  // points per time chart
constexpr int kCdfPoints = 200;
constexpr double kW = 720, kH = 240, kLeft = 60, kRight = 15, kTop = 15, kBottom = 35;

std::string Fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// "3.5 h", "12 d": a duration for an axis label.
std::string Human(double s) {
  if (s < 120) return Fixed(s, 0) + " s";
  if (s < 7200) return Fixed(s / 60, 0) + " min";
  if (s < 2 * 86400) return Fixed(s / 3600, 1) + " h";
  return Fixed(s / 86400, 1) + " d";
}

struct Point {
  double x = 0;  // 0..1 across the plot
  double y = 0;  // 0..1 up the plot
};

struct Chart {
  std::string title;
  std::vector<Point> points;
  std::vector<std::pair<double, std::string>> x_ticks;  // (0..1, label)
  std::vector<std::pair<double, std::string>> y_ticks;
  bool steps = false;
};

std::string Svg(const Chart& c) {
  const double pw = kW - kLeft - kRight;
  const double ph = kH - kTop - kBottom;
  auto X = [&](double x) { return Fixed(kLeft + x * pw); };
  auto Y = [&](double y) { return Fixed(kTop + (1 - y) * ph); };
  std::string s = "<figure><figcaption>" + Escape(c.title) + "</figcaption>\n<svg viewBox=\"0 0 " +
                  Fixed(kW, 0) + " " + Fixed(kH, 0) +
                  "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n";
  s += "<rect x=\"" + X(0) + "\" y=\"" + Y(1) + "\" width=\"" + Fixed(pw) + "\" height=\"" +
       Fixed(ph) + "\" class=\"plot\"/>\n";
  for (const auto& [x, label] : c.x_ticks) {
    s += "<line x1=\"" + X(x) + "\" y1=\"" + Y(0) + "\" x2=\"" + X(x) + "\" y2=\"" + Y(1) +
         "\" class=\"grid\"/><text x=\"" + X(x) + "\" y=\"" + Fixed(kH - kBottom + 16) +
         // The last label ends at the plot's edge rather than past the image's.
         "\" text-anchor=\"" + (x > 0.95 ? "end" : "middle") + "\">" + Escape(label) + "</text>\n";
  }
  for (const auto& [y, label] : c.y_ticks) {
    s += "<line x1=\"" + X(0) + "\" y1=\"" + Y(y) + "\" x2=\"" + X(1) + "\" y2=\"" + Y(y) +
         "\" class=\"grid\"/><text x=\"" + Fixed(kLeft - 6) + "\" y=\"" +
         Fixed(kTop + (1 - y) * ph + 4) + "\" text-anchor=\"end\">" + Escape(label) + "</text>\n";
  }
  s += "<polyline class=\"line\" points=\"";
  for (size_t i = 0; i < c.points.size(); ++i) {
    const Point& p = c.points[i];
    if (c.steps && i > 0) s += X(p.x) + "," + Y(c.points[i - 1].y) + " ";
    s += X(p.x) + "," + Y(p.y) + " ";
  }
  s += "\"/>\n</svg></figure>\n";
  return s;
}

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

std::vector<std::pair<double, std::string>> TimeTicks(int64_t span_s) {
  std::vector<std::pair<double, std::string>> t;
  for (int i = 0; i <= 4; ++i) {
    t.emplace_back(i / 4.0, Human(static_cast<double>(span_s) * i / 4.0));
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

  Chart util{"GPU utilization over time (share of " + std::to_string(id.gpus) +
                 " GPUs held by jobs; mean per 1/" + std::to_string(kSlices) + " of the run)",
             {},
             TimeTicks(m.makespan_s),
             {},
             true};
  for (int k = 0; k < kSlices; ++k) {
    util.points.push_back(
        {static_cast<double>(k) / kSlices, busy[static_cast<size_t>(k)] / id.gpus});
  }
  util.points.push_back({1.0, util.points.empty() ? 0 : util.points.back().y});
  for (int i = 0; i <= 4; ++i) util.y_ticks.emplace_back(i / 4.0, std::to_string(i * 25) + " %");

  double qmax = 1;
  for (double q : queued) qmax = std::max(qmax, q);
  qmax = std::ceil(qmax / 4) * 4;  // whole jobs at each of the 4 tick steps
  Chart queue{"Jobs waiting over time (mean per slice)", {}, TimeTicks(m.makespan_s), {}, true};
  for (int k = 0; k < kSlices; ++k) {
    queue.points.push_back(
        {static_cast<double>(k) / kSlices, queued[static_cast<size_t>(k)] / qmax});
  }
  queue.points.push_back({1.0, queue.points.empty() ? 0 : queue.points.back().y});
  for (int i = 0; i <= 4; ++i) queue.y_ticks.emplace_back(i / 4.0, Fixed(qmax * i / 4.0, 0));

  std::vector<int64_t> jct;
  jct.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) jct.push_back(r.outcomes[i].end_s - jobs[i].submit_s);
  std::sort(jct.begin(), jct.end());
  Chart cdf{"CDF of job completion times (arrival to end; log axis)", {}, {}, {}, false};
  if (!jct.empty()) {
    const double lo =
        std::floor(std::log10(static_cast<double>(std::max<int64_t>(jct.front(), 1))));
    const double hi = std::max(lo + 1, std::ceil(std::log10(static_cast<double>(jct.back()))));
    auto xs = [&](int64_t v) {
      return (std::log10(static_cast<double>(std::max<int64_t>(v, 1))) - lo) / (hi - lo);
    };
    for (int k = 0; k <= kCdfPoints; ++k) {
      const size_t idx = std::min(jct.size() - 1, jct.size() * static_cast<size_t>(k) / kCdfPoints);
      cdf.points.push_back(
          {xs(jct[idx]), static_cast<double>(idx + 1) / static_cast<double>(jct.size())});
    }
    for (double e = lo; e <= hi; e += 1) {
      cdf.x_ticks.emplace_back((e - lo) / (hi - lo), Human(std::pow(10.0, e)));
    }
  }
  for (int i = 0; i <= 4; ++i) cdf.y_ticks.emplace_back(i / 4.0, std::to_string(i * 25) + " %");

  const std::string title = "gleaner sim replay: " + id.trace + ", " + id.policy + ", " +
                            std::to_string(id.gpus) + " GPUs";
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + Escape(title) +
      "</title>\n<style>body{font:14px sans-serif;margin:2em;max-width:780px;color:#222}"
      "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right;border-bottom:1px "
      "solid #ddd}th{text-align:left}figure{margin:1.5em 0}figcaption{font-weight:bold;margin-"
      "bottom:4px}svg{width:100%;height:auto}svg text{font-size:11px;fill:#444}.plot{fill:none;"
      "stroke:#888}.grid{stroke:#e4e4e4}.line{fill:none;stroke:#1f6fb2;stroke-width:1.5}"
      "</style></head><body>\n<h1>" +
      Escape(title) + "</h1>\n";
  h += "<p>" + std::to_string(m.jobs) + " jobs on " + std::to_string(id.gpus / id.gpus_per_node) +
       " nodes of " + std::to_string(id.gpus_per_node) + " GPUs; policy <b>" + Escape(id.policy) +
       "</b>; seed " + std::to_string(id.seed) + "; " + std::to_string(id.skipped_rows) +
       " dirty rows skipped.</p>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) {
    h += "<tr><th>" + Escape(k) + "</th><td>" + Escape(v) + "</td></tr>\n";
  };
  row("makespan",
      Human(static_cast<double>(m.makespan_s)) + " (" + std::to_string(m.makespan_s) + " s)");
  row("utilization", Fixed(100 * m.utilization, 2) + " %");
  row("completion time mean / median / p99",
      Human(m.jct.mean_s) + " / " + Human(m.jct.median_s) + " / " + Human(m.jct.p99_s));
  row("queueing time mean / median / p99",
      Human(m.queue.mean_s) + " / " + Human(m.queue.median_s) + " / " + Human(m.queue.p99_s));
  row("peak GPUs busy / jobs waiting",
      std::to_string(m.peak_busy_gpus) + " / " + std::to_string(m.peak_queued_jobs));
  if (id.placed_beside > 0)
    row("multi-node jobs placed beside the scheduler", std::to_string(id.placed_beside));
  h += "</table>\n" + Svg(util) + Svg(queue) + Svg(cdf) + "</body></html>\n";
  return h;
}

}  // namespace gleaner::sim
