#include "sim/svg_chart.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/format.h"

namespace gleaner::sim {
namespace {

constexpr double kW = 720, kH = 240, kLeft = 60, kRight = 15, kTop = 15, kBottom = 35;
constexpr double kLegendRow = 18;  // above the plot, when a chart has a legend
constexpr double kPlotW = kW - kLeft - kRight;

// Where the plot sits: its top edge moves down to make room for a legend.
struct Plot {
  double top = kTop;
  [[nodiscard]] double Height() const { return kH - top - kBottom; }
  [[nodiscard]] std::string X(double x) const { return core::FormatFixed(kLeft + x * kPlotW); }
  [[nodiscard]] std::string Y(double y) const {
    return core::FormatFixed(top + (1 - y) * Height());
  }
};

using LegendEntries = std::vector<std::pair<std::string, std::string>>;  // (css class, label)

Plot PlotFor(const LegendEntries& legend) {
  return Plot{legend.empty() ? kTop : kTop + kLegendRow};
}

// The figure's caption, the <svg> opening, the plot's frame and grid lines.
std::string Frame(const Plot& p, const std::string& title, const ChartTicks& x_ticks,
                  const ChartTicks& y_ticks) {
  std::string s = "<figure><figcaption>" + EscapeHtml(title) +
                  "</figcaption>\n<svg viewBox=\"0 0 " + core::FormatFixed(kW, 0) + " " +
                  core::FormatFixed(kH, 0) +
                  "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\">\n";
  s += "<rect x=\"" + p.X(0) + "\" y=\"" + p.Y(1) + "\" width=\"" + core::FormatFixed(kPlotW) +
       "\" height=\"" + core::FormatFixed(p.Height()) + "\" class=\"plot\"/>\n";
  for (const auto& [x, label] : x_ticks) {
    s += "<line x1=\"" + p.X(x) + "\" y1=\"" + p.Y(0) + "\" x2=\"" + p.X(x) + "\" y2=\"" + p.Y(1) +
         "\" class=\"grid\"/><text x=\"" + p.X(x) + "\" y=\"" +
         core::FormatFixed(kH - kBottom + 16) +
         // The last label ends at the plot's edge rather than past the image's.
         "\" text-anchor=\"" + (x > 0.95 ? "end" : "middle") + "\">" + EscapeHtml(label) +
         "</text>\n";
  }
  for (const auto& [y, label] : y_ticks) {
    s += "<line x1=\"" + p.X(0) + "\" y1=\"" + p.Y(y) + "\" x2=\"" + p.X(1) + "\" y2=\"" + p.Y(y) +
         "\" class=\"grid\"/><text x=\"" + core::FormatFixed(kLeft - 6) + "\" y=\"" +
         core::FormatFixed(p.top + (1 - y) * p.Height() + 4) + "\" text-anchor=\"end\">" +
         EscapeHtml(label) + "</text>\n";
  }
  return s;
}

// Legend entries in a row above the plot: a swatch drawn by
// `swatch(css_class, x, y)` and the label, spaced by the label's length.
template <typename Swatch>
std::string Legend(const LegendEntries& entries, Swatch swatch) {
  std::string s;
  double x = kLeft;
  const double y = kTop + 2;
  for (const auto& [css_class, label] : entries) {
    s += swatch(css_class, x, y) + "<text x=\"" + core::FormatFixed(x + 26) + "\" y=\"" +
         core::FormatFixed(y + 4) + "\">" + EscapeHtml(label) + "</text>\n";
    x += 26 + 6.5 * static_cast<double>(label.size()) + 20;
  }
  return s;
}

}  // namespace

std::string EscapeHtml(const std::string& s) {
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

std::string HumanDuration(double s) {
  if (s < 120) return core::FormatFixed(s, 0) + " s";
  if (s < 7200) return core::FormatFixed(s / 60, 0) + " min";
  if (s < 2 * 86400) return core::FormatFixed(s / 3600, 1) + " h";
  return core::FormatFixed(s / 86400, 1) + " d";
}

std::string RenderLineChart(const LineChart& c) {
  LegendEntries legend;
  for (const ChartLine& line : c.lines) {
    if (!line.label.empty()) legend.emplace_back(line.css_class, line.label);
  }
  const Plot p = PlotFor(legend);
  std::string s = Frame(p, c.title, c.x_ticks, c.y_ticks);
  for (const ChartLine& line : c.lines) {
    s += "<polyline class=\"" + line.css_class + "\" points=\"";
    for (size_t i = 0; i < line.points.size(); ++i) {
      const ChartPoint& pt = line.points[i];
      if (c.steps && i > 0) s += p.X(pt.x) + "," + p.Y(line.points[i - 1].y) + " ";
      s += p.X(pt.x) + "," + p.Y(pt.y) + " ";
    }
    s += "\"/>\n";
  }
  s += Legend(legend, [](const std::string& css_class, double x, double y) {
    return "<line x1=\"" + core::FormatFixed(x) + "\" y1=\"" + core::FormatFixed(y) + "\" x2=\"" +
           core::FormatFixed(x + 20) + "\" y2=\"" + core::FormatFixed(y) + "\" class=\"" +
           css_class + "\"/>";
  });
  s += "</svg></figure>\n";
  return s;
}

std::string RenderBarChart(const BarChart& c) {
  const size_t series = c.series_classes.size();
  LegendEntries legend;
  for (size_t k = 0; k < series && k < c.series_labels.size(); ++k) {
    legend.emplace_back(c.series_classes[k], c.series_labels[k]);
  }
  const Plot p = PlotFor(legend);
  std::string s = Frame(p, c.title, {}, c.y_ticks);
  const double group_w = c.groups.empty() ? 0 : 1.0 / static_cast<double>(c.groups.size());
  // Bars fill 70 % of their group, side by side; the rest is the gap.
  const double bar_w = series == 0 ? 0 : 0.7 * group_w / static_cast<double>(series);
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const BarGroup& group = c.groups[g];
    const double left = (static_cast<double>(g) + 0.15) * group_w;
    for (size_t k = 0; k < series && k < group.values.size(); ++k) {
      const double v = std::clamp(group.values[k], 0.0, 1.0);
      s += "<rect x=\"" + p.X(left + static_cast<double>(k) * bar_w) + "\" y=\"" + p.Y(v) +
           "\" width=\"" + core::FormatFixed(bar_w * kPlotW) + "\" height=\"" +
           core::FormatFixed(v * p.Height()) + "\" class=\"" + c.series_classes[k] + "\"/>\n";
    }
    s += "<text x=\"" + p.X((static_cast<double>(g) + 0.5) * group_w) + "\" y=\"" +
         core::FormatFixed(kH - kBottom + 16) + "\" text-anchor=\"middle\">" +
         EscapeHtml(group.label) + "</text>\n";
  }
  s += Legend(legend, [](const std::string& css_class, double x, double y) {
    return "<rect x=\"" + core::FormatFixed(x) + "\" y=\"" + core::FormatFixed(y - 5) +
           "\" width=\"20\" height=\"10\" class=\"" + css_class + "\"/>";
  });
  s += "</svg></figure>\n";
  return s;
}

double NiceTop(double v, double min_step) {
  const double step = std::max(v / 4, min_step);
  const double magnitude = std::pow(10.0, std::floor(std::log10(step)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * magnitude >= step * (1 - 1e-12)) return 4 * m * magnitude;
  }
  return 40 * magnitude;
}

ChartTicks YTicks(double top, int digits) {
  ChartTicks t;
  for (int i = 0; i <= 4; ++i) t.emplace_back(i / 4.0, core::FormatFixed(top * i / 4.0, digits));
  return t;
}

LineChart DurationCdf(std::string title, std::vector<ChartLine> lines,
                      std::vector<std::vector<int64_t>> durations) {
  constexpr int kPoints = 200;
  LineChart cdf{std::move(title), std::move(lines), {}, {}, false};
  int64_t least = INT64_MAX, most = 0;
  for (std::vector<int64_t>& d : durations) {
    std::sort(d.begin(), d.end());
    if (d.empty()) continue;
    least = std::min(least, d.front());
    most = std::max(most, d.back());
  }
  for (int i = 0; i <= 4; ++i) cdf.y_ticks.emplace_back(i / 4.0, std::to_string(i * 25) + " %");
  if (most == 0) return cdf;
  const double lo = std::floor(std::log10(static_cast<double>(std::max<int64_t>(least, 1))));
  const double hi = std::max(lo + 1, std::ceil(std::log10(static_cast<double>(most))));
  const auto x = [&](int64_t v) {
    return (std::log10(static_cast<double>(std::max<int64_t>(v, 1))) - lo) / (hi - lo);
  };
  for (size_t l = 0; l < durations.size() && l < cdf.lines.size(); ++l) {
    const std::vector<int64_t>& d = durations[l];
    for (int k = 0; k <= kPoints && !d.empty(); ++k) {
      const size_t idx = std::min(d.size() - 1, d.size() * static_cast<size_t>(k) / kPoints);
      cdf.lines[l].points.push_back(
          {x(d[idx]), static_cast<double>(idx + 1) / static_cast<double>(d.size())});
    }
  }
  for (double e = lo; e <= hi; e += 1) {
    cdf.x_ticks.emplace_back((e - lo) / (hi - lo), HumanDuration(std::pow(10.0, e)));
  }
  return cdf;
}

std::string ReportPageStart(const std::string& title, const std::string& extra_css) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
         EscapeHtml(title) +
         "</title>\n<style>body{font:14px sans-serif;margin:2em;max-width:780px;color:#222}"
         "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right;border-bottom:"
         "1px solid #ddd}th{text-align:left}figure{margin:1.5em 0}figcaption{font-weight:bold;"
         "margin-bottom:4px}svg{width:100%;height:auto}svg text{font-size:11px;fill:#444}.plot{"
         "fill:none;stroke:#888}.grid{stroke:#e4e4e4}.line{fill:none;stroke:#1f6fb2;stroke-"
         "width:1.5}" +
         extra_css + "</style></head><body>\n<h1>" + EscapeHtml(title) + "</h1>\n";
}

}  // namespace gleaner::sim
