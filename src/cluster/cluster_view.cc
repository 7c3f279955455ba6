#include "cluster/cluster_view.h"

#include "core/civil_time.h"
#include "metrics/exposition.h"
#include "observe/verdict_json.h"

namespace gleaner::cluster {

using nlohmann::json;

namespace {

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

json ClusterToJson(const std::vector<HostView>& hosts, core::TimePoint now) {
  json out = {{"schema", "gleaner.cluster/v1"}, {"taken_at", core::Rfc3339(now)}};
  json list = json::array();
  for (const HostView& h : hosts) {
    json gpus = json::array();
    for (size_t i = 0; i < h.gpus.size(); ++i) {
      const InventoryGpu& g = h.gpus[i];
      const GpuStatus s = i < h.status.size() ? h.status[i] : GpuStatus{};
      // A silent host's GPUs are unknown, whatever they last said.
      const bool known = h.health == HostView::Health::kUp;
      json gpu = {{"index", g.index},
                  {"uuid", g.uuid.str()},
                  {"name", g.model},
                  {"memory_total_bytes", g.memory.count()},
                  {"state", known ? observe::GpuStateName(s.state) : "unknown"},
                  {"reason",
                   known && i < h.reasons.size() ? h.reasons[i] : "host " + h.name + " is silent"},
                  {"lendable", known && s.lendable_free}};
      if (known && i < h.details.size() && h.details[i]) {
        // The card's processes and evidence, as on one host.
        const GpuDetail& d = *h.details[i];
        gpu["verdict"] = observe::VerdictToJson(d.verdict);
        if (d.processes_known) {
          json processes = json::array();
          for (const observe::ObservedProcess& p : d.processes) {
            processes.push_back({{"pid", p.pid},
                                 {"user", p.user.empty() ? json(nullptr) : json(p.user)},
                                 {"command", p.command.empty() ? json(nullptr) : json(p.command)},
                                 {"used_memory_bytes", p.used_memory.count()},
                                 {"gleaner_job", p.gleaner_job}});
          }
          gpu["processes"] = std::move(processes);
        } else {
          gpu["processes"] = nullptr;
        }
      }
      if (known) {
        gpu["utilization_gpu_pct"] = OrNull(s.utilization_pct);
        gpu["memory_used_bytes"] =
            s.memory_used_mib ? json(*s.memory_used_mib * (int64_t{1} << 20)) : json(nullptr);
        gpu["power_draw_w"] = OrNull(s.power_w);
        gpu["temperature_c"] = OrNull(s.temperature_c);
      }
      gpus.push_back(std::move(gpu));
    }
    list.push_back(
        {{"host", h.name},
         {"health", HealthName(h.health)},
         {"last_report", h.last_report ? json(core::Rfc3339(*h.last_report)) : json(nullptr)},
         {"jobs", h.jobs},
         {"gpus", std::move(gpus)}});
  }
  out["hosts"] = std::move(list);
  return out;
}

std::string RenderClusterMetrics(const std::vector<HostView>& hosts,
                                 const std::map<std::string, int64_t>& jobs,
                                 const metrics::Histogram::Snapshot& start_latency, bool leading,
                                 core::TimePoint now) {
  metrics::Exposition e;
  e.Family("gleaner_coordinator_leading", "gauge",
           "1 on the coordinator that leads, 0 on one that stands by");
  e.Sample("gleaner_coordinator_leading", {}, leading ? 1 : 0);
  e.Family("gleaner_agents", "gauge", "Agents by health: up, silent (GPUs unknown), lost");
  std::map<std::string, int> by_health = {{"up", 0}, {"silent", 0}, {"lost", 0}};
  for (const HostView& h : hosts) ++by_health[std::string(HealthName(h.health))];
  for (const auto& [health, n] : by_health) e.Sample("gleaner_agents", {{"health", health}}, n);
  e.Family("gleaner_agent_report_age_seconds", "gauge",
           "Seconds since each agent last reported to this coordinator");
  for (const HostView& h : hosts) {
    if (h.last_report) {
      e.Sample("gleaner_agent_report_age_seconds", {{"hostname", h.name}},
               core::ToSecondsDouble(now - *h.last_report));
    }
  }
  e.Family("gleaner_gpu_state", "gauge",
           "Each GPU's verdict as a state set, as its agent last reported it");
  for (const HostView& h : hosts) {
    for (size_t i = 0; i < h.gpus.size(); ++i) {
      const std::string state = h.health == HostView::Health::kUp && i < h.status.size()
                                    ? std::string(observe::GpuStateName(h.status[i].state))
                                    : "unknown";
      e.Sample("gleaner_gpu_state",
               {{"hostname", h.name},
                {"gpu", std::to_string(h.gpus[i].index)},
                {"uuid", h.gpus[i].uuid.str()},
                {"model", h.gpus[i].model},
                {"state", state}},
               1);
    }
  }
  e.Family("gleaner_jobs", "gauge", "Jobs that have not ended, by state");
  for (const char* state : {"pending_approval", "queued", "held", "running", "vacating"}) {
    const auto n = jobs.find(state);
    e.Sample("gleaner_jobs", {{"state", state}},
             n == jobs.end() ? 0.0 : static_cast<double>(n->second));
  }
  // The name `gleaner up` uses: one dashboard panel for both.
  e.Family("gleaner_scheduling_latency_seconds", "histogram",
           "From a job's submission to its start.");
  e.HistogramSamples("gleaner_scheduling_latency_seconds", {}, start_latency);
  metrics::BuildInfo(e, "server", kProtocolVersion);
  return e.text();
}

}  // namespace gleaner::cluster
