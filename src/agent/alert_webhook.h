#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "core/units.h"
#include "observe/alerts.h"

namespace gleaner::agent {

// Alertmanager's webhook payload (version 4) for `events`: what
// Alertmanager itself POSTs to receivers, so any receiver written for it
// takes gleaner's alerts unchanged.
std::string AlertmanagerPayload(const std::vector<observe::AlertEvent>& events,
                                const std::string& hostname);

// Delivers alert payloads to a webhook on a background thread: each POST is
// retried with exponential backoff until it gets a 2xx answer or runs out
// of attempts; every outcome goes to `log`. Send() never blocks on the
// network. Thread-safe.
class AlertWebhook {
 public:
  struct Options {
    std::string url;
    std::string hostname;
    int max_attempts = 6;
    core::Duration first_backoff = core::Seconds(1);
    core::Duration max_backoff = core::Seconds(60);
    core::Duration timeout = core::Seconds(5);
  };
  AlertWebhook(Options options, std::function<void(const std::string&)> log);
  // Stops after the delivery in progress; what is still queued is logged
  // as undelivered.
  ~AlertWebhook();
  AlertWebhook(const AlertWebhook&) = delete;
  AlertWebhook& operator=(const AlertWebhook&) = delete;

  void Send(const std::vector<observe::AlertEvent>& events);
  // Waits until nothing is queued or in flight, or `timeout` passes.
  bool WaitIdle(core::Duration timeout);
  int64_t delivered() const;
  int64_t dropped() const;

 private:
  void Work() GLEANER_EXCLUDES(mu_);

  Options options_;
  std::function<void(const std::string&)> log_;
  mutable core::Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_ GLEANER_GUARDED_BY(mu_);
  bool busy_ GLEANER_GUARDED_BY(mu_) = false;  // a payload is out of the queue, not yet settled
  bool stop_ GLEANER_GUARDED_BY(mu_) = false;
  int64_t delivered_ GLEANER_GUARDED_BY(mu_) = 0;
  int64_t dropped_ GLEANER_GUARDED_BY(mu_) = 0;
  std::thread worker_;
};

}  // namespace gleaner::agent
