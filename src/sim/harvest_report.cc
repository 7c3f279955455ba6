#include "sim/harvest_report.h"

#include <algorithm>

#include "core/format.h"
#include "sim/svg_chart.h"

namespace gleaner::sim {
namespace {

std::string RunName(const HarvestBaselineRun& r) {
  return std::string(HarvestPolicyName(r.policy)) + (r.policy == HarvestPolicy::kNone ? ""
                                                     : r.checkpoints ? ", checkpoints"
                                                                     : ", none saved");
}

// The run to draw for a policy: the one with checkpoints when there is one.
const HarvestBaselineRun* Pick(const std::vector<HarvestBaselineRun>& runs, HarvestPolicy p) {
  const HarvestBaselineRun* pick = nullptr;
  for (const HarvestBaselineRun& r : runs) {
    if (r.policy == p && (pick == nullptr || r.checkpoints)) pick = &r;
  }
  return pick;
}

ChartTicks TimeTicks(int64_t span_s) {
  ChartTicks t;
  for (int i = 0; i <= 4; ++i) {
    t.emplace_back(i / 4.0, HumanDuration(static_cast<double>(span_s) * i / 4.0));
  }
  return t;
}

// One point per slice (its mean over the slice), drawn as steps.
ChartLine SliceLine(const std::vector<HarvestSlice>& slices, double slice_s, double top,
                    double (*value)(const HarvestSlice&), std::string css, std::string label) {
  ChartLine line{{}, std::move(css), std::move(label)};
  const double n = static_cast<double>(slices.size());
  for (size_t k = 0; k < slices.size(); ++k) {
    line.points.push_back({static_cast<double>(k) / n, value(slices[k]) / slice_s / top});
  }
  if (!line.points.empty()) line.points.push_back({1.0, line.points.back().y});
  return line;
}

double Idle(const HarvestSlice& s) { return s.idle_unused + s.harvested; }
double Harvested(const HarvestSlice& s) { return s.harvested; }
double Queued(const HarvestSlice& s) { return s.queued; }

std::string Hours(double h) { return core::FormatFixed(h, h < 100 ? 1 : 0); }

}  // namespace

std::string RenderHarvestReport(const HarvestScenarioInfo& info, const OwnerTimeline& owner,
                                const std::vector<HarvestJob>& queue,
                                const std::vector<HarvestBaselineRun>& runs) {
  const std::string title =
      info.title.empty() ? "gleaner sim harvest: " + info.owner_trace : info.title;
  std::string h = ReportPageStart(
      title,
      ".line2{fill:none;stroke:#d9822b;stroke-width:1.5}.line3{fill:none;stroke:#2a9d4b;"
      "stroke-width:1.5}.line4{fill:none;stroke:#999;stroke-width:1.5}.bar1{fill:#2a9d4b}"
      ".line5{fill:none;stroke:#2b6cd9;stroke-width:1.5}.line6{fill:none;stroke:#8e44ad;"
      "stroke-width:1.5}.bar2{fill:#c0392b}.bar3{fill:#d9822b}p.note{color:#555}"
      "td,th{font-size:13px}");
  h += info.preface_html;
  const int64_t span_s = owner.end_s - owner.start_s;
  const HarvestLimit limit = runs.empty() ? HarvestLimit{} : LimitOf(runs.front().result);
  h += "<p>" + std::to_string(owner.gpu_count()) + " GPUs on " +
       std::to_string(owner.node_gpus.size()) + " nodes for " +
       HumanDuration(static_cast<double>(span_s)) + ". Queue: " + EscapeHtml(info.queue_source) +
       (info.queue_source == "synthetic" ? " (seed " + std::to_string(info.seed) + ")" : "") +
       ", " + std::to_string(queue.size()) + " jobs asking for " + Hours(info.offered_gpu_hours) +
       " GPU-hours. Jobs save their state every " + std::to_string(info.checkpoint_s) +
       " s in the runs with checkpoints; a signalled job takes " + std::to_string(info.vacate_s) +
       " s to leave.</p>\n<p>The physical limit: owners left <b>" + Hours(limit.idle_gpu_hours) +
       " GPU-hours</b> idle (under the busy threshold), " + Hours(limit.held_idle_gpu_hours) +
       " of them with an owner's process holding the GPU; " + Hours(limit.owner_busy_gpu_hours) +
       " GPU-hours busy, " + Hours(limit.no_data_gpu_hours) + " without data.</p>\n";

  h += "<table>\n<tr><th>run</th><th>harvested GPU-h</th><th>while owners idle GPU-h (of "
       "idle)</th><th>useful GPU-h</th>"
       "<th>lost GPU-h</th><th>owner returns</th><th>owner wait GPU-h</th><th>jobs done</th>"
       "<th>median / p99 JCT</th><th>median wait</th><th>Jain</th></tr>\n";
  for (const HarvestBaselineRun& r : runs) {
    const HarvestMetrics& m = r.metrics;
    h += "<tr><th>" + EscapeHtml(RunName(r)) + "</th><td>" + Hours(m.harvested_gpu_hours) +
         "</td><td>" + Hours(m.harvested_idle_gpu_hours) + " (" +
         core::FormatFixed(100 * m.harvested_share_of_idle, 1) + " %)</td><td>" +
         Hours(m.useful_gpu_hours) + "</td><td>" + Hours(m.lost_gpu_hours) + "</td><td>" +
         std::to_string(m.owner_returns) + "</td><td>" +
         core::FormatFixed(m.owner_delay_gpu_hours, 1) + "</td><td>" +
         std::to_string(m.jobs_finished) + " / " + std::to_string(queue.size()) + "</td><td>" +
         (m.jobs_finished > 0 ? HumanDuration(m.jct.median_s) + " / " + HumanDuration(m.jct.p99_s)
                              : "-") +
         "</td><td>" + (m.jobs_finished > 0 ? HumanDuration(m.queue.median_s) : "-") + "</td><td>" +
         (m.jain_fairness ? core::FormatFixed(*m.jain_fairness, 3) : "-") + "</td></tr>\n";
  }
  h += "</table>\n";
  if (info.prices) {
    const HarvestPrices& p = *info.prices;
    const std::string currency(cost::CurrencyName(p.currency));
    const auto usd = [&](double v) {
      return core::FormatFixed(v, v < 1000 ? 2 : 0) + " " + currency;
    };
    h += "<h2>Money</h2>\n<p>GPUs priced as " + EscapeHtml(p.gpu_model) +
         ": an owned GPU-hour costs " + usd(*p.owned_per_gpu_hour) +
         " (capex, maintenance, power; " + EscapeHtml(p.onprem_source) + "), filling an idle one " +
         usd(*p.marginal_per_gpu_hour) + " of extra energy; renting one on demand " +
         usd(*p.cloud_per_gpu_hour) + " (" + EscapeHtml(p.cloud_offer) + "; " +
         EscapeHtml(p.cloud_source) + ", " + EscapeHtml(p.cloud_date) +
         "). The idle GPU-hours of the physical limit cost <b>" + usd(info.money.idle_cost) +
         "</b>.</p>\n<table>\n<tr><th>run</th><th>useful work at the "
         "cloud price</th><th>energy to harvest</th><th>net saving</th></tr>\n";
    for (size_t i = 0; i < runs.size() && i < info.money.runs.size(); ++i) {
      const HarvestRunMoney& m = info.money.runs[i];
      h += "<tr><th>" + EscapeHtml(RunName(runs[i])) + "</th><td>" + usd(m.cloud_value) +
           "</td><td>" + usd(m.energy_cost) + "</td><td>" + usd(m.net_savings) + "</td></tr>\n";
    }
    h += "</table>\n";
  }
  h += "<p class=\"note\">Harvested: GPU-time jobs held lent GPUs, also while owners "
       "computed beside them (so it may pass the physical limit); while owners idle: the part "
       "used while owners were away, and its share of the physical limit. Useful: harvested less "
       "the work "
       "preemptions threw away (lost). Owner returns: lent GPUs their owners took back; owner "
       "wait: the GPU-time owners waited for a job to leave. Jain: fairness across users of the "
       "share of their asked GPU-hours that finished (1 = equal).</p>\n";

  // Every lending policy that ran, each in its colour; "none" lends nothing.
  struct Drawn {
    const HarvestBaselineRun* run;
    const char* css;
  };
  std::vector<Drawn> lending;
  for (const auto& [policy, css] :
       {std::pair{HarvestPolicy::kNaive, "line2"}, std::pair{HarvestPolicy::kGleaner, "line3"},
        std::pair{HarvestPolicy::kColocate, "line5"}, std::pair{HarvestPolicy::kPark, "line6"}}) {
    const HarvestBaselineRun* r = Pick(runs, policy);
    if (r != nullptr && !r->result.slices.empty()) lending.push_back({r, css});
  }
  const HarvestBaselineRun* none = Pick(runs, HarvestPolicy::kNone);
  if (!lending.empty()) {
    const std::vector<HarvestSlice>& first = lending.front().run->result.slices;
    const double slice_s = static_cast<double>(span_s) / static_cast<double>(first.size());
    double top = 1;
    for (const HarvestSlice& s : first) top = std::max(top, Idle(s) / slice_s);
    top = NiceTop(top, 1);
    LineChart c{"GPUs idle (the physical limit) and harvested over time (mean per slice)",
                {SliceLine(first, slice_s, top, Idle, "line4", "idle")},
                TimeTicks(span_s),
                YTicks(top, 0),
                true};
    for (const Drawn& d : lending) {
      c.lines.push_back(SliceLine(d.run->result.slices, slice_s, top, Harvested, d.css,
                                  "harvested: " + std::string(HarvestPolicyName(d.run->policy))));
    }
    h += RenderLineChart(c);

    double qtop = 1;
    if (none != nullptr) {
      for (const HarvestSlice& s : none->result.slices) qtop = std::max(qtop, Queued(s) / slice_s);
    }
    for (const Drawn& d : lending) {
      for (const HarvestSlice& s : d.run->result.slices) qtop = std::max(qtop, Queued(s) / slice_s);
    }
    qtop = NiceTop(qtop, 1);
    LineChart q{
        "Jobs waiting over time (mean per slice)", {}, TimeTicks(span_s), YTicks(qtop, 0), true};
    if (none != nullptr) {
      q.lines.push_back(SliceLine(none->result.slices, slice_s, qtop, Queued, "line4", "none"));
    }
    for (const Drawn& d : lending) {
      q.lines.push_back(SliceLine(d.run->result.slices, slice_s, qtop, Queued, d.css,
                                  std::string(HarvestPolicyName(d.run->policy))));
    }
    h += RenderLineChart(q);
  }

  BarChart bars;
  bars.title = "Where each run's harvested GPU-hours went, and what owners waited (GPU-hours)";
  bars.series_labels = {"useful", "lost to preemption", "owners waited"};
  bars.series_classes = {"bar1", "bar2", "bar3"};
  double btop = 1;
  for (const HarvestBaselineRun& r : runs) {
    btop = std::max({btop, r.metrics.useful_gpu_hours, r.metrics.lost_gpu_hours,
                     r.metrics.owner_delay_gpu_hours});
  }
  btop = NiceTop(btop, 1);
  for (const HarvestBaselineRun& r : runs) {
    if (r.policy == HarvestPolicy::kNone) continue;
    bars.groups.push_back({RunName(r),
                           {r.metrics.useful_gpu_hours / btop, r.metrics.lost_gpu_hours / btop,
                            r.metrics.owner_delay_gpu_hours / btop}});
  }
  bars.y_ticks = YTicks(btop, 0);
  h += RenderBarChart(bars);

  std::vector<ChartLine> lines;
  std::vector<std::vector<int64_t>> jcts;
  for (const Drawn& d : lending) {
    std::vector<int64_t> jct;
    for (size_t j = 0; j < queue.size(); ++j) {
      if (d.run->result.jobs[j].end_s >= 0) {
        jct.push_back(d.run->result.jobs[j].end_s - queue[j].submit_s);
      }
    }
    lines.push_back({{}, d.css, std::string(HarvestPolicyName(d.run->policy))});
    jcts.push_back(std::move(jct));
  }
  h += RenderLineChart(
      DurationCdf("CDF of completion times of the jobs that finished (submit to end; log axis)",
                  std::move(lines), std::move(jcts)));
  h += "</body></html>\n";
  return h;
}

}  // namespace gleaner::sim
