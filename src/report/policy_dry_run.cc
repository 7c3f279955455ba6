#include "report/policy_dry_run.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "core/format.h"
#include "sim/svg_chart.h"

namespace gleaner::report {
namespace {

// A dry-run on fewer minutes than this says nothing.
constexpr int64_t kMinMinutes = 2;

int64_t Seconds(core::TimePoint t) { return core::ToUnixMicros(t) / 1'000'000; }

// The owner's part of a minute: what its owners' processes did, gleaner's
// jobs left out.
sim::OwnerSegment OwnerOf(const observe::MinuteRollup& m) {
  sim::OwnerSegment s;
  s.at_s = Seconds(m.minute);
  s.has_data = m.observed > core::Duration{};
  s.owner_process = !m.users.empty();
  const bool only_jobs = !s.owner_process && m.harvested > core::Duration{};
  s.utilization_pct = only_jobs ? 0 : m.utilization_mean_pct;
  s.memory_bytes =
      s.owner_process && m.memory_used_max ? static_cast<int64_t>(m.memory_used_max->count()) : 0;
  return s;
}

// How long a job would run: as long as it last ran to its end, else what
// its spec says; 0: not known.
int64_t WorkOf(const store::JobRecord& j) {
  if ((j.state == store::JobState::kSucceeded || j.state == store::JobState::kFailed) &&
      j.started_at && j.finished_at && *j.finished_at > *j.started_at) {
    return std::max<int64_t>(1, Seconds(*j.finished_at) - Seconds(*j.started_at));
  }
  const std::optional<core::Duration> said =
      j.spec.expected_runtime ? j.spec.expected_runtime : j.spec.max_runtime;
  if (!said) return 0;
  return std::max<int64_t>(1, static_cast<int64_t>(core::ToSecondsDouble(*said)));
}

}  // namespace

core::Result<SiteScenario> SiteScenarioFromStore(store::Store& store, core::TimePoint from,
                                                 core::TimePoint to) {
  SiteScenario s;
  GLEANER_ASSIGN_OR_RETURN(std::vector<store::GpuRecord> gpus, store.Gpus());
  GLEANER_ASSIGN_OR_RETURN(std::vector<observe::MinuteRollup> minutes,
                           store.RollupsBetween(from, to));
  s.minutes = static_cast<int64_t>(minutes.size());
  std::set<core::TimePoint> distinct;
  for (const observe::MinuteRollup& m : minutes) distinct.insert(m.minute);
  if (gpus.empty() || static_cast<int64_t>(distinct.size()) < kMinMinutes) {
    return core::FailedPrecondition(
        "the store holds " + std::to_string(distinct.size()) + " minute(s) of history in the " +
        "span; a dry-run needs at least " + std::to_string(kMinMinutes) +
        ": let gleaner up watch longer, or give a longer --since");
  }
  // GPUs host by host, each host's by index: the nodes of the timeline.
  std::sort(gpus.begin(), gpus.end(), [](const store::GpuRecord& a, const store::GpuRecord& b) {
    return std::tie(a.host, a.index) < std::tie(b.host, b.index);
  });
  std::map<core::GpuUuid, size_t> at;
  sim::OwnerTimeline& t = s.owner;
  t.name = "this site";
  t.step_s = 60;
  t.from_counts = false;
  t.start_s = Seconds(minutes.front().minute);
  t.end_s = t.start_s;
  for (const observe::MinuteRollup& m : minutes)
    t.end_s = std::max(t.end_s, Seconds(m.minute) + 60);
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (i == 0 || gpus[i].host != gpus[i - 1].host) t.node_gpus.push_back(0);
    ++t.node_gpus.back();
    at[gpus[i].uuid] = i;
  }
  // Minute by minute (a minute without a roll-up has no data), adjacent
  // minutes alike merged into one segment.
  std::vector<std::map<int64_t, sim::OwnerSegment>> by_minute(gpus.size());
  for (const observe::MinuteRollup& m : minutes) {
    if (const auto g = at.find(m.uuid); g != at.end()) {
      by_minute[g->second][Seconds(m.minute)] = OwnerOf(m);
    }
  }
  t.gpus.assign(gpus.size(), {});
  for (size_t g = 0; g < gpus.size(); ++g) {
    std::vector<sim::OwnerSegment>& out = t.gpus[g];
    for (int64_t minute = t.start_s; minute < t.end_s; minute += 60) {
      const auto found = by_minute[g].find(minute);
      sim::OwnerSegment seg = found != by_minute[g].end() ? found->second : sim::OwnerSegment{};
      seg.at_s = minute;
      if (!out.empty()) {
        sim::OwnerSegment same = out.back();
        same.at_s = minute;
        if (same == seg) continue;
      }
      out.push_back(seg);
    }
  }

  // The queue: what was submitted in the span, as long as it ran.
  const int largest = *std::max_element(t.node_gpus.begin(), t.node_gpus.end());
  store::JobQuery q;
  for (;;) {
    q.limit = 1000;
    GLEANER_ASSIGN_OR_RETURN(std::vector<store::JobRecord> page, store.Find(q));
    for (const store::JobRecord& j : page) {
      if (j.submitted_at < from || j.submitted_at >= to) continue;
      const int64_t work = WorkOf(j);
      if (work == 0 || j.spec.gpus > largest) {
        ++s.jobs_left_out;
        continue;
      }
      sim::HarvestJob h;
      h.submit_s = std::max(t.start_s, Seconds(j.submitted_at));
      h.work_s = work;
      h.gpus = j.spec.gpus;
      h.user = j.user;
      h.gpu_memory = j.spec.gpu_memory;
      s.queue.push_back(h);
      s.projects.push_back(j.spec.project);
    }
    if (static_cast<int64_t>(page.size()) < q.limit) break;
    q.after = page.back().id;
  }
  if (s.queue.empty()) {
    // Nothing to place: a seeded stand-in asking for the idle time there
    // was, the same for both policies.
    sim::SyntheticQueueOptions o;
    o.seed = 1;
    o.start_s = t.start_s;
    o.end_s = t.end_s;
    o.offered_gpu_s = static_cast<double>(sim::QuietGpuSeconds(t, 10));
    o.max_gpus = largest;
    s.queue = sim::SyntheticQueue(o);
    s.projects.assign(s.queue.size(), "(synthetic)");
    s.synthetic_queue = true;
  }
  // Sorted by submission, projects alongside.
  std::vector<size_t> order(s.queue.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return s.queue[a].submit_s < s.queue[b].submit_s; });
  std::vector<sim::HarvestJob> queue;
  std::vector<std::string> projects;
  for (size_t i : order) {
    queue.push_back(s.queue[i]);
    projects.push_back(s.projects[i]);
  }
  s.queue = std::move(queue);
  s.projects = std::move(projects);
  return s;
}

sim::HarvestConfig HarvestConfigOf(const config::GleanerConfig& policy) {
  sim::HarvestConfig c;
  c.idle = policy.idle;
  c.policy = sim::HarvestPolicy::kGleaner;
  if (policy.colocation) {
    c.colocation = *policy.colocation;
    c.policy = sim::HarvestPolicy::kColocate;
  }
  if (policy.parking.enabled) {
    c.policy = sim::HarvestPolicy::kPark;
    c.park_idle_s = static_cast<int64_t>(core::ToSecondsDouble(policy.parking.park_idle_timeout));
    c.park_notice_s = static_cast<int64_t>(core::ToSecondsDouble(policy.parking.notice));
  }
  return c;
}

std::optional<cost::GpuHourPrices> PriceSiteGpus(const std::vector<store::GpuRecord>& gpus,
                                                 const config::GleanerConfig& policy,
                                                 const cost::Catalog& catalog) {
  std::map<std::string, int> models;
  for (const store::GpuRecord& g : gpus) {
    ++models[policy.cost.ModelOf(
        g.name, g.memory_total ? std::optional<uint64_t>(g.memory_total->count()) : std::nullopt)];
  }
  const auto most =
      std::max_element(models.begin(), models.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most == models.end()) return std::nullopt;
  cost::GpuHourPrices p =
      cost::PriceGpuHours(most->first, catalog, policy.cost.OnPremFor(most->first),
                          policy.cost.currency, policy.cost.rates);
  if (!p.owned_per_gpu_hour || !p.marginal_per_gpu_hour || !p.cloud_per_gpu_hour) {
    return std::nullopt;
  }
  return p;
}

core::Result<DryRun> RunDryRun(store::Store& store, const config::GleanerConfig& current,
                               const config::GleanerConfig& candidate, const cost::Catalog& catalog,
                               core::TimePoint from, core::TimePoint to) {
  DryRun run;
  GLEANER_ASSIGN_OR_RETURN(run.scenario, SiteScenarioFromStore(store, from, to));
  GLEANER_ASSIGN_OR_RETURN(run.current, sim::RunHarvest(run.scenario.owner, run.scenario.queue,
                                                        HarvestConfigOf(current)));
  GLEANER_ASSIGN_OR_RETURN(run.candidate, sim::RunHarvest(run.scenario.owner, run.scenario.queue,
                                                          HarvestConfigOf(candidate)));
  GLEANER_ASSIGN_OR_RETURN(std::vector<store::GpuRecord> gpus, store.Gpus());
  run.prices = PriceSiteGpus(gpus, current, catalog);
  return run;
}

namespace {

struct Figures {
  double harvested_h = 0;
  double lost_h = 0;
  int64_t owner_returns = 0;
  int64_t preemptions = 0;
  double owner_delay_h = 0;
  int64_t finished = 0;
  std::optional<double> mean_wait_s;  // of the jobs that started; none started: unset
  std::map<std::string, std::pair<int64_t, double>> projects;  // jobs started, GPU-hours run
  // Priced: the useful work at the on-demand price, less the energy of
  // harvesting (sim::MoneyOf).
  double cloud_value = 0;
  double net_savings = 0;
};

Figures FiguresOf(const sim::HarvestResult& r, const SiteScenario& s,
                  const std::optional<cost::GpuHourPrices>& prices) {
  Figures f;
  f.harvested_h = static_cast<double>(r.harvested_gpu_s) / 3600;
  f.lost_h = static_cast<double>(r.lost_gpu_s) / 3600;
  f.owner_returns = r.owner_returns;
  f.preemptions = r.preemptions;
  f.owner_delay_h = static_cast<double>(r.owner_delay_gpu_s) / 3600;
  int64_t started = 0;
  double waited = 0;
  for (size_t i = 0; i < r.jobs.size() && i < s.queue.size(); ++i) {
    const sim::HarvestJobOutcome& o = r.jobs[i];
    if (o.end_s >= 0) ++f.finished;
    auto& p = f.projects[s.projects[i].empty() ? "(none)" : s.projects[i]];
    if (o.first_start_s < 0) continue;
    ++started;
    ++p.first;
    waited += static_cast<double>(o.first_start_s - s.queue[i].submit_s);
    const int64_t end = o.end_s >= 0 ? o.end_s : s.owner.end_s;
    p.second += static_cast<double>((end - o.first_start_s) * s.queue[i].gpus) / 3600;
  }
  if (started > 0) f.mean_wait_s = waited / static_cast<double>(started);
  if (prices) {
    f.cloud_value = (f.harvested_h - f.lost_h) * *prices->cloud_per_gpu_hour;
    f.net_savings = f.cloud_value - f.harvested_h * *prices->marginal_per_gpu_hour;
  }
  return f;
}

std::string Change(double before, double after) {
  if (before == after) return "";
  if (before == 0) return "  (new)";
  char text[32];
  std::snprintf(text, sizeof text, "  (%+.0f%%)", (after - before) / before * 100);
  return text;
}

}  // namespace

std::string DryRunText(const DryRun& run) {
  const Figures a = FiguresOf(run.current, run.scenario, run.prices);
  const Figures b = FiguresOf(run.candidate, run.scenario, run.prices);
  const sim::OwnerTimeline& t = run.scenario.owner;
  char line[256];
  std::string out =
      "dry-run on this site's history: " +
      core::FormatDuration(core::Seconds(t.end_s - t.start_s)) + ", " +
      std::to_string(t.gpu_count()) + " GPU(s), " + std::to_string(run.scenario.minutes) +
      " GPU-minutes; " + std::to_string(run.scenario.queue.size()) +
      (run.scenario.synthetic_queue ? " synthetic jobs (none was submitted in the span)"
                                    : " job(s) submitted") +
      (run.scenario.jobs_left_out > 0 ? " (" + std::to_string(run.scenario.jobs_left_out) +
                                            " left out: length unknown, or larger than a host)"
                                      : "") +
      "\n";
  if (run.prices) {
    const cost::GpuHourPrices& p = *run.prices;
    const std::string currency(cost::CurrencyName(p.currency));
    out += "money: GPUs priced as " + p.gpu_model + ", " +
           core::FormatFixed(*p.cloud_per_gpu_hour, 2) + " " + currency + "/GPU-h on demand (" +
           p.cloud_offer + "; " + p.cloud_source + ", " + p.cloud_date + "), " +
           core::FormatFixed(*p.marginal_per_gpu_hour, 2) + " to fill an idle one\n";
  }
  out += "\n";
  std::snprintf(line, sizeof line, "%-26s %-22s %s\n", "", run.current_name.c_str(),
                run.candidate_name.c_str());
  out += line;
  const auto row = [&](const char* what, double x, double y, const char* format) {
    char xs[64];
    char ys[64];
    std::snprintf(xs, sizeof xs, format, x);
    std::snprintf(ys, sizeof ys, format, y);
    std::snprintf(line, sizeof line, "%-26s %-22s %s%s\n", what, xs, ys, Change(x, y).c_str());
    out += line;
  };
  row("harvested GPU-hours", a.harvested_h, b.harvested_h, "%.3g");
  row("owner returns", static_cast<double>(a.owner_returns), static_cast<double>(b.owner_returns),
      "%.0f");
  row("preemptions", static_cast<double>(a.preemptions), static_cast<double>(b.preemptions),
      "%.0f");
  row("lost GPU-hours", a.lost_h, b.lost_h, "%.3g");
  row("owners waited, GPU-hours", a.owner_delay_h, b.owner_delay_h, "%.3g");
  row("jobs finished", static_cast<double>(a.finished), static_cast<double>(b.finished), "%.0f");
  const auto minutes = [](const std::optional<double>& s) {
    char text[32] = "-";
    if (s) std::snprintf(text, sizeof text, "%.1f", *s / 60);
    return std::string(text);
  };
  std::snprintf(line, sizeof line, "%-26s %-22s %s\n", "mean wait, minutes",
                minutes(a.mean_wait_s).c_str(), minutes(b.mean_wait_s).c_str());
  out += line;
  if (run.prices) {
    const std::string currency(cost::CurrencyName(run.prices->currency));
    row(("work at on-demand, " + currency).c_str(), a.cloud_value, b.cloud_value, "%.2f");
    row(("net saving, " + currency).c_str(), a.net_savings, b.net_savings, "%.2f");
  }
  out += "\nper project: jobs started, GPU-hours run\n";
  for (const auto& [project, x] : a.projects) {
    const auto y = b.projects.at(project);
    char xs[64];
    char ys[64];
    std::snprintf(xs, sizeof xs, "%lld, %.3g", static_cast<long long>(x.first), x.second);
    std::snprintf(ys, sizeof ys, "%lld, %.3g", static_cast<long long>(y.first), y.second);
    std::snprintf(line, sizeof line, "  %-24s %-22s %s\n", project.c_str(), xs, ys);
    out += line;
  }
  return out;
}

nlohmann::ordered_json DryRunJson(const DryRun& run) {
  const auto figures = [&](const sim::HarvestResult& r, const std::string& name) {
    const Figures f = FiguresOf(r, run.scenario, run.prices);
    nlohmann::ordered_json projects = nlohmann::ordered_json::object();
    for (const auto& [p, v] : f.projects) {
      projects[p] = {{"jobs_started", v.first}, {"gpu_hours", v.second}};
    }
    return nlohmann::ordered_json{
        {"policy", name},
        {"harvested_gpu_hours", f.harvested_h},
        {"owner_returns", f.owner_returns},
        {"preemptions", f.preemptions},
        {"lost_gpu_hours", f.lost_h},
        {"owner_delay_gpu_hours", f.owner_delay_h},
        {"jobs_finished", f.finished},
        {"mean_wait_s",
         f.mean_wait_s ? nlohmann::ordered_json(*f.mean_wait_s) : nlohmann::ordered_json(nullptr)},
        {"projects", projects},
        {"money", run.prices ? nlohmann::ordered_json{{"cloud_value", f.cloud_value},
                                                      {"net_savings", f.net_savings}}
                             : nlohmann::ordered_json(nullptr)}};
  };
  const sim::OwnerTimeline& t = run.scenario.owner;
  return {
      {"span_s", t.end_s - t.start_s},
      {"gpus", t.gpu_count()},
      {"gpu_minutes", run.scenario.minutes},
      {"jobs", run.scenario.queue.size()},
      {"synthetic_queue", run.scenario.synthetic_queue},
      {"jobs_left_out", run.scenario.jobs_left_out},
      {"prices",
       run.prices
           ? nlohmann::ordered_json{{"gpu_model", run.prices->gpu_model},
                                    {"currency", cost::CurrencyName(run.prices->currency)},
                                    {"cloud_per_gpu_hour", *run.prices->cloud_per_gpu_hour},
                                    {"marginal_per_gpu_hour", *run.prices->marginal_per_gpu_hour}}
           : nlohmann::ordered_json(nullptr)},
      {"current", figures(run.current, run.current_name)},
      {"candidate", figures(run.candidate, run.candidate_name)}};
}

}  // namespace gleaner::report
