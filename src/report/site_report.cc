#include "report/site_report.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "core/civil_time.h"
#include "core/format.h"
#include "sim/harvest_report.h"
#include "sim/svg_chart.h"

namespace gleaner::report {
namespace {

// The events of [from, to), a page at a time.
core::Result<std::vector<store::EventRecord>> EventsBetween(store::Store& store,
                                                            core::TimePoint from,
                                                            core::TimePoint to) {
  std::vector<store::EventRecord> all;
  store::EventQuery q;
  q.since = from;
  q.limit = 1000;
  for (;;) {
    GLEANER_ASSIGN_OR_RETURN(std::vector<store::EventRecord> page, store.Events(q));
    for (store::EventRecord& e : page) {
      if (e.at < to) all.push_back(std::move(e));
    }
    // Ids are in order of appending, not always of time (hosts' clocks
    // differ): every page is read.
    if (static_cast<int64_t>(page.size()) < q.limit) break;
    q.after = page.back().id;
  }
  return all;
}

double SecondsBetween(core::TimePoint a, core::TimePoint b) { return core::ToSecondsDouble(b - a); }

// Why a job was asked to leave, without the GPU the claim was on: the
// scheduler writes "GPU-...: for job 9 (...)" (sched/vacate.cc).
std::string_view VacateCause(std::string_view detail) {
  const size_t colon = detail.find(": ");
  if (colon == std::string_view::npos ||
      detail.substr(0, colon).find(' ') != std::string_view::npos) {
    return detail;
  }
  return detail.substr(colon + 2);
}

}  // namespace

core::Result<JobActivity> JobActivityFromStore(store::Store& store, core::TimePoint from,
                                               core::TimePoint to) {
  GLEANER_ASSIGN_OR_RETURN(std::vector<store::EventRecord> events, EventsBetween(store, from, to));
  JobActivity a;
  std::map<sched::JobId, core::TimePoint> submitted;  // jobs submitted in the span
  std::set<sched::JobId> started;
  std::vector<double> waits;
  // The events that only count.
  const std::map<std::string_view, int64_t*> counted = {
      {"succeeded", &a.succeeded}, {"failed", &a.failed},     {"cancelled", &a.cancelled},
      {"requeued", &a.requeued},   {"approved", &a.approved}, {"denied", &a.denied},
      {"expired", &a.expired},     {"parked", &a.parked},     {"restored", &a.restored}};
  for (const store::EventRecord& e : events) {
    const std::string& k = e.kind;
    if (const auto c = counted.find(k); c != counted.end()) {
      ++*c->second;
    } else if (k == "submitted") {
      ++a.submitted;
      if (e.job) submitted[*e.job] = e.at;
    } else if (k == "started") {
      if (!e.job || !started.insert(*e.job).second) continue;
      if (const auto s = submitted.find(*e.job); s != submitted.end()) {
        ++a.started;
        waits.push_back(SecondsBetween(s->second, e.at));
      }
    } else if (k == "vacating") {
      // A preemption names the job it makes room for, an owner's return
      // the owner (docs/events.md), after the GPU that was claimed; the
      // rest is a GPU's state or a lost coordinator.
      const std::string_view cause = VacateCause(e.detail);
      ++(cause.starts_with("for job ") ? a.preempted
         : cause.starts_with("owner returned") ||
                 cause.find(" is being restored (") != std::string_view::npos
             ? a.owner_returns
             : a.sent_away);
    } else if (k == "policy_applied" || k == "policy_rolled_back") {
      a.policy_changes.push_back(core::Rfc3339(e.at) + " " +
                                 (k == "policy_applied" ? "applied" : "rolled back") + " by " +
                                 e.actor + (e.detail.empty() ? "" : ": " + e.detail));
    }
  }
  // Who waited for an approver: those decided, and those waiting still.
  a.approvals_asked = a.approved + a.denied + a.expired;
  store::JobQuery waiting;
  waiting.states = {store::JobState::kPendingApproval};
  waiting.limit = 1000;
  for (;;) {
    GLEANER_ASSIGN_OR_RETURN(std::vector<store::JobRecord> page, store.Find(waiting));
    for (const store::JobRecord& j : page) {
      if (submitted.contains(j.id)) ++a.approvals_asked;
    }
    if (static_cast<int64_t>(page.size()) < waiting.limit) break;
    waiting.after = page.back().id;
  }
  if (!waits.empty()) {
    double sum = 0;
    for (double w : waits) sum += w;
    a.mean_wait_s = sum / static_cast<double>(waits.size());
    std::sort(waits.begin(), waits.end());
    a.median_wait_s = waits[waits.size() / 2];
  }
  return a;
}

core::Result<SiteReport> BuildSiteReport(store::Store& store, const config::GleanerConfig& policy,
                                         const cost::Catalog& catalog, core::TimePoint from,
                                         core::TimePoint to) {
  SiteReport r;
  r.from = from;
  r.to = to;
  GLEANER_ASSIGN_OR_RETURN(r.ledger, server::BuildLedgerReport(store, catalog, policy.cost,
                                                               policy.project_of_user, from, to));
  GLEANER_ASSIGN_OR_RETURN(r.jobs, JobActivityFromStore(store, from, to));
  GLEANER_ASSIGN_OR_RETURN(std::vector<store::GpuRecord> gpus, store.Gpus());
  std::set<std::string> hosts;
  core::Bytes memory;
  for (const store::GpuRecord& g : gpus) {
    hosts.insert(g.host);
    if (g.memory_total) memory = std::max(memory, *g.memory_total);
  }
  for (const std::string& h : hosts) r.hosts += (r.hosts.empty() ? "" : ", ") + h;

  auto scenario = SiteScenarioFromStore(store, from, to);
  if (!scenario.ok()) {
    if (scenario.status().code() != core::StatusCode::kFailedPrecondition) {
      return scenario.status();
    }
    r.replay_missing = scenario.status().message();
    return r;
  }
  r.scenario = std::move(scenario).value();
  sim::HarvestConfig config = HarvestConfigOf(policy);
  if (memory > core::Bytes()) config.gpu_memory = memory;
  const bool held_runs = config.policy != sim::HarvestPolicy::kGleaner;
  GLEANER_ASSIGN_OR_RETURN(
      r.runs, sim::RunHarvestBaselines(r.scenario->owner, r.scenario->queue, config, held_runs));
  r.prices = PriceSiteGpus(gpus, policy, catalog);
  return r;
}

namespace {

std::string Hours(double h) { return core::FormatFixed(h, h < 10 ? 2 : h < 100 ? 1 : 0); }

std::string Count(int64_t n) { return std::to_string(n); }

}  // namespace

std::string RenderSiteReport(const SiteReport& r) {
  const cost::CostReport& c = r.ledger.report;
  const std::string cur(cost::CurrencyName(c.currency));
  const auto money = [&](double v) { return core::FormatFixed(v, v < 1000 ? 2 : 0) + " " + cur; };
  const std::string span = core::Rfc3339(r.from) + " to " + core::Rfc3339(r.to);
  std::string h;
  h += "<p>" + sim::EscapeHtml(span) + ", " + std::to_string(r.ledger.gpus.size()) + " GPU(s)" +
       (r.hosts.empty() ? "" : " on " + sim::EscapeHtml(r.hosts)) + ".</p>\n";

  // What the minutes say: the cost ledger (docs/cost.md).
  const cost::CostLine& t = c.total;
  h += "<h2>What the GPUs did</h2>\n<table>\n"
       "<tr><th></th><th>GPU-hours</th><th>share</th><th>money</th></tr>\n";
  const auto share = [&](double part) {
    return t.observed_h > 0 ? core::FormatFixed(100 * part / t.observed_h, 1) + " %" : "-";
  };
  h += "<tr><th>observed</th><td>" + Hours(t.observed_h) + "</td><td></td><td></td></tr>\n";
  h += "<tr><th>owners' work</th><td>" + Hours(t.used_h) + "</td><td>" + share(t.used_h) +
       "</td><td></td></tr>\n";
  h += "<tr><th>idle, nobody on it</th><td>" + Hours(t.idle_h) + "</td><td>" + share(t.idle_h) +
       "</td><td>" + money(t.idle_cost) + " owned cost</td></tr>\n";
  h += "<tr><th>held idle by a quiet process</th><td>" + Hours(t.held_idle_h) + "</td><td>" +
       share(t.held_idle_h) + "</td><td>" + money(t.held_idle_cost) + " owned cost</td></tr>\n";
  h += "<tr><th>harvested by gleaner's jobs</th><td>" + Hours(t.harvested_h) + "</td><td>" +
       share(t.harvested_h) + "</td><td>" + money(t.harvested_cloud_value) +
       " at the on-demand price, less " + money(t.harvest_energy_cost) + " of energy: <b>" +
       money(t.net_savings) + "</b> saved</td></tr>\n</table>\n";
  for (const std::string& w : r.ledger.warnings) {
    h += "<p class=\"note\">" + sim::EscapeHtml(w) + "</p>\n";
  }
  if (!c.by_project.empty()) {
    h += "<h3>By project</h3>\n<table>\n<tr><th>project</th><th>owners' work GPU-h</th><th>held "
         "idle GPU-h</th>"
         "<th>harvested GPU-h</th><th>harvest saved</th></tr>\n";
    for (const auto& [project, line] : c.by_project) {
      h += "<tr><th>" + sim::EscapeHtml(project) + "</th><td>" + Hours(line.used_h) + "</td><td>" +
           Hours(line.held_idle_h) + "</td><td>" + Hours(line.harvested_h) + "</td><td>" +
           money(line.net_savings) + "</td></tr>\n";
    }
    h += "</table>\n";
  }

  // What the history says happened to the jobs (docs/events.md).
  const JobActivity& j = r.jobs;
  h += "<h2>Jobs</h2>\n<table>\n";
  const auto row = [&](const std::string& what, const std::string& value) {
    h += "<tr><th>" + what + "</th><td>" + value + "</td></tr>\n";
  };
  row("submitted", Count(j.submitted));
  row("started (of those)", Count(j.started));
  row("succeeded / failed / cancelled",
      Count(j.succeeded) + " / " + Count(j.failed) + " / " + Count(j.cancelled));
  row("given back to returning owners", Count(j.owner_returns));
  row("preempted for other jobs", Count(j.preempted));
  row("sent away otherwise (a GPU's state, a lost coordinator)", Count(j.sent_away));
  row("requeued", Count(j.requeued));
  row("mean / median wait to start", j.mean_wait_s ? sim::HumanDuration(*j.mean_wait_s) + " / " +
                                                         sim::HumanDuration(*j.median_wait_s)
                                                   : "-");
  row("waited for approval: approved / denied / expired / waiting",
      Count(j.approvals_asked) + ": " + Count(j.approved) + " / " + Count(j.denied) + " / " +
          Count(j.expired) + " / " + Count(j.approvals_asked - j.approved - j.denied - j.expired));
  row("holders parked / restored", Count(j.parked) + " / " + Count(j.restored));
  h += "</table>\n";
  h += "<h2>Policy</h2>\n";
  if (j.policy_changes.empty()) {
    h += "<p>No change in the span.</p>\n";
  } else {
    h += "<ul>\n";
    for (const std::string& change : j.policy_changes) {
      h += "<li>" + sim::EscapeHtml(change) + "</li>\n";
    }
    h += "</ul>\n";
  }

  // The replay, in the simulator's own words.
  h += "<h2>The running policy replayed on this span</h2>\n";
  if (!r.scenario) {
    h += "<p>Not replayed: " + sim::EscapeHtml(r.replay_missing) + ".</p>\n";
  }
  sim::HarvestScenarioInfo info;
  info.title = "gleaner report: " + (r.hosts.empty() ? std::string("this site") : r.hosts);
  info.preface_html = h;
  if (!r.scenario) {
    return sim::ReportPageStart(info.title, "p.note{color:#555}td,th{font-size:13px}") + h +
           "</body></html>\n";
  }
  info.queue_source = r.scenario->synthetic_queue ? "synthetic" : "the jobs submitted in the span";
  info.seed = 1;
  info.vacate_s = sim::HarvestConfig{}.vacate_s;
  for (const sim::HarvestJob& q : r.scenario->queue) {
    info.offered_gpu_hours += static_cast<double>(q.work_s * q.gpus) / 3600;
  }
  if (r.prices) {
    info.prices = r.prices;
    info.money = sim::MoneyOf(*r.prices, r.runs);
  }
  return sim::RenderHarvestReport(info, r.scenario->owner, r.scenario->queue, r.runs);
}

}  // namespace gleaner::report
