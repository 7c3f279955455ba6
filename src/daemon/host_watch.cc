#include "daemon/host_watch.h"

namespace gleaner::daemon {

HostWatch::HostWatch(HostWatchOptions options, const cluster::Log& log)
    : options_(std::move(options)),
      alerts_(options_.alert_rules),
      metrics_(options_.hostname, options_.daemon) {
  if (!options_.alert_webhook_url.empty()) {
    webhook_ = std::make_unique<agent::AlertWebhook>(
        agent::AlertWebhook::Options{options_.alert_webhook_url, options_.hostname}, log);
  }
}

HostWatch::~HostWatch() {
  if (webhook_) webhook_->WaitIdle(core::Seconds(10));
}

void HostWatch::Observe(const agent::HostPass& pass, const cluster::Log& log) {
  std::vector<observe::AlertEvent> events;
  for (size_t i = 0; i < pass.verdicts.size(); ++i) {
    const observe::Verdict& v = pass.verdicts[i];
    auto it = last_state_.find(v.uuid);
    if (it == last_state_.end() || it->second != v.state) {
      log("GPU " + std::to_string(pass.snapshots[i].index) + " " + v.uuid.str() + " " +
          (it == last_state_.end() ? std::string("-")
                                   : std::string(observe::GpuStateName(it->second))) +
          " -> " + std::string(observe::GpuStateName(v.state)) + ": " + v.evidence.reason);
      last_state_[v.uuid] = v.state;
    }
    for (observe::AlertEvent& e : alerts_.Observe(pass.samples[i], v)) {
      events.push_back(std::move(e));
    }
  }
  Notify(events, log);
  if (!pass.verdicts.empty()) metrics_.Observe(pass, options_.max_sample_gap);
}

void HostWatch::Notify(const std::vector<observe::AlertEvent>& events, const cluster::Log& log) {
  for (const observe::AlertEvent& e : events) {
    log(std::string("alert ") + (e.firing ? "firing " : "resolved ") + e.rule + ": " + e.summary);
  }
  if (webhook_) webhook_->Send(events);
}

}  // namespace gleaner::daemon
