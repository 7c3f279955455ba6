#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gleaner::sim {

// Pieces of the simulator's reports: self-contained HTML pages with inline
// CSS and SVG (no scripts, fonts, images or network). Everything here is a
// pure function of its arguments, and numbers are printed with fixed
// precision, so the same inputs give the same bytes.

// `s` with < > & " escaped for HTML text and attributes.
std::string EscapeHtml(const std::string& s);

// A duration for an axis or a table: "90 s", "12 min", "3.5 h", "12.0 d".
std::string HumanDuration(double s);

// A point on a chart, as shares of the plot: x from 0 (left) to 1 (right),
// y from 0 (bottom) to 1 (top).
struct ChartPoint {
  double x = 0;
  double y = 0;
};

// Tick positions (0..1 along the axis) and their labels.
using ChartTicks = std::vector<std::pair<double, std::string>>;

struct ChartLine {
  std::vector<ChartPoint> points;
  std::string css_class = "line";  // its stroke, from the page's style sheet
  std::string label;               // in the legend; lines without one are left out of it
};

struct LineChart {
  std::string title;  // the figure's caption
  std::vector<ChartLine> lines;
  ChartTicks x_ticks;
  ChartTicks y_ticks;
  bool steps = false;  // draw each point's value flat until the next point
};

// The smallest of 1, 2, 2.5, 5 x 10^k, times 4, at or above `v`: a y-axis
// top with four round steps. At least 4 * min_step.
double NiceTop(double v, double min_step);

// Five ticks, 0 to `top`, labelled with `digits` decimals.
ChartTicks YTicks(double top, int digits);

// The cumulative share of each set of durations (seconds) at or below x,
// on a log x axis spanning whole decades around all the sets, 201 points
// per set; y ticks in percent. `lines` give each set's class and label;
// their points are filled in.
LineChart DurationCdf(std::string title, std::vector<ChartLine> lines,
                      std::vector<std::vector<int64_t>> durations);

// A <figure> with the caption and a 720x240 SVG: plot frame, grid lines at
// the ticks, one polyline per line and, when any line has a label, a
// legend in a row above the plot (which then starts lower).
std::string RenderLineChart(const LineChart& chart);

struct BarGroup {
  std::string label;           // under the group
  std::vector<double> values;  // one per series, as shares of the plot height (0..1)
};

struct BarChart {
  std::string title;
  std::vector<std::string> series_labels;   // in the legend
  std::vector<std::string> series_classes;  // fills, from the style sheet; as many as labels
  std::vector<BarGroup> groups;
  ChartTicks y_ticks;
};

// A <figure> with grouped vertical bars, one group per entry in `groups`,
// in the same frame as RenderLineChart, with a legend above the plot.
std::string RenderBarChart(const BarChart& chart);

// The start of a report page: doctype, <title>, the shared style sheet
// followed by `extra_css`, and an <h1> with `title`. The caller adds the
// body and closes it with "</body></html>\n".
std::string ReportPageStart(const std::string& title, const std::string& extra_css = "");

}  // namespace gleaner::sim
