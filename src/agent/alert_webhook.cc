#include "agent/alert_webhook.h"

#include <nlohmann/json.hpp>

#include "core/civil_time.h"
#include "net/http_client.h"
#include "observe/verdict_json.h"

namespace gleaner::agent {

std::string AlertmanagerPayload(const std::vector<observe::AlertEvent>& events,
                                const std::string& hostname) {
  using nlohmann::json;
  json alerts = json::array();
  bool any_firing = false;
  for (const observe::AlertEvent& e : events) {
    any_firing = any_firing || e.firing;
    json labels = {{"alertname", e.rule},
                   {"gpu_uuid", e.uuid.str()},
                   {"hostname", hostname},
                   {"severity", e.severity}};
    if (!e.users.empty())
      labels["users"] = [&] {
        std::string joined;
        for (const std::string& u : e.users) joined += (joined.empty() ? "" : ",") + u;
        return joined;
      }();
    if (!e.job.empty()) labels["job_id"] = e.job;
    alerts.push_back({
        {"status", e.firing ? "firing" : "resolved"},
        {"labels", labels},
        {"annotations", {{"summary", e.summary}}},
        {"startsAt", core::Rfc3339(e.starts_at)},
        {"endsAt", e.firing ? "0001-01-01T00:00:00Z" : core::Rfc3339(e.ends_at)},
        {"generatorURL", ""},
        {"fingerprint", e.rule + "/" + (e.job.empty() ? e.uuid.str() : "job/" + e.job)},
    });
  }
  json payload = {
      {"version", "4"},
      {"groupKey", "gleaner/" + hostname},
      {"truncatedAlerts", 0},
      {"status", any_firing ? "firing" : "resolved"},
      {"receiver", "gleaner"},
      {"groupLabels", {{"hostname", hostname}}},
      {"commonLabels", {{"hostname", hostname}}},
      {"commonAnnotations", json::object()},
      {"externalURL", ""},
      {"alerts", alerts},
  };
  return payload.dump(-1, ' ', false, json::error_handler_t::replace);
}

AlertWebhook::AlertWebhook(Options options, std::function<void(const std::string&)> log)
    : options_(std::move(options)), log_(std::move(log)), worker_([this] { Work(); }) {}

AlertWebhook::~AlertWebhook() {
  {
    core::MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
  if (!queue_.empty()) {
    log_("alerts: " + std::to_string(queue_.size()) + " payload(s) undelivered at shutdown");
  }
}

void AlertWebhook::Send(const std::vector<observe::AlertEvent>& events) {
  if (events.empty()) return;
  {
    core::MutexLock lock(mu_);
    queue_.push_back(AlertmanagerPayload(events, options_.hostname));
  }
  cv_.notify_all();
}

bool AlertWebhook::WaitIdle(core::Duration timeout) {
  core::MutexLock lock(mu_);
  return mu_.AwaitFor(cv_, timeout, [this] {
    mu_.AssertHeld();
    return queue_.empty() && !busy_;
  });
}

int64_t AlertWebhook::delivered() const {
  core::MutexLock lock(mu_);
  return delivered_;
}

int64_t AlertWebhook::dropped() const {
  core::MutexLock lock(mu_);
  return dropped_;
}

void AlertWebhook::Work() {
  core::MutexLock lock(mu_);
  for (;;) {
    mu_.Await(cv_, [this] {
      mu_.AssertHeld();
      return stop_ || !queue_.empty();
    });
    if (stop_) return;
    const std::string payload = queue_.front();
    queue_.pop_front();
    busy_ = true;
    core::Duration backoff = options_.first_backoff;
    bool done = false;
    for (int attempt = 1; attempt <= options_.max_attempts && !done && !stop_; ++attempt) {
      lock.Unlock();
      auto status = net::PostJson(options_.url, payload, options_.timeout);
      lock.Lock();
      if (status.ok() && *status >= 200 && *status < 300) {
        done = true;
        ++delivered_;
        break;
      }
      const std::string why =
          status.ok() ? "HTTP " + std::to_string(*status) : status.status().message();
      log_("alerts: delivery " + std::to_string(attempt) + "/" +
           std::to_string(options_.max_attempts) + " to " + options_.url + " failed: " + why);
      if (attempt < options_.max_attempts) {
        mu_.AwaitFor(cv_, backoff, [this] {
          mu_.AssertHeld();
          return stop_;
        });
        backoff = std::min(backoff * 2, options_.max_backoff);
      }
    }
    if (!done) {
      ++dropped_;
      log_("alerts: gave up on a payload to " + options_.url);
    }
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace gleaner::agent
