#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/alert_webhook.h"
#include "agent/host_metrics.h"
#include "agent/sampler.h"
#include "cluster/log.h"
#include "observe/alerts.h"

namespace gleaner::daemon {

struct HostWatchOptions {
  std::string hostname;
  std::string daemon;                           // up, monitor or agent
  std::vector<observe::AlertRule> alert_rules;  // [[alerts.rule]]
  std::string alert_webhook_url;                // empty: alerts only go to the log
  core::Duration max_sample_gap = core::Seconds(30);
};

// What every daemon that samples a host does with each pass, whether it
// lends (`gleaner up`, `gleaner agent`) or not (`gleaner monitor`): logs
// each GPU's change of state with its reason, fires the alert rules (to
// the log and the webhook) and keeps the host's metrics. Not thread-safe,
// except metrics(), which the API threads read.
class HostWatch {
 public:
  HostWatch(HostWatchOptions options, const cluster::Log& log);
  // Delivers what the webhook still holds, for up to 10 s.
  ~HostWatch();

  void Observe(const agent::HostPass& pass, const cluster::Log& log);
  // Events from elsewhere in the daemon (a holder told it will be parked):
  // to the log and the webhook, like the rules' own.
  void Notify(const std::vector<observe::AlertEvent>& events, const cluster::Log& log);

  agent::HostMetrics& metrics() { return metrics_; }

 private:
  HostWatchOptions options_;
  observe::AlertEvaluator alerts_;
  std::unique_ptr<agent::AlertWebhook> webhook_;
  agent::HostMetrics metrics_;
  std::map<core::GpuUuid, observe::GpuState> last_state_;
};

}  // namespace gleaner::daemon
