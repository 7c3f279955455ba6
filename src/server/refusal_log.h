#pragma once

#include <map>
#include <string>

#include "cluster/log.h"
#include "core/clock.h"
#include "core/mutex.h"

namespace gleaner::server {

// Logs refusals (a join with a spent token, a report with a stale
// credential) without letting a flood of them fill the log: the first of
// each kind in a minute is logged as it comes, the rest are counted and
// summed up, with the latest, by the first of that kind after the minute.
// Thread-safe.
class RefusalLog {
 public:
  RefusalLog(const core::Clock& clock, cluster::Log log) : clock_(clock), log_(std::move(log)) {}

  // `kind` groups refusals ("join", "report"); `line` says what and why.
  void Note(const std::string& kind, const std::string& line);

  static constexpr core::Duration kWindow = core::Seconds(60);

 private:
  struct Window {
    core::TimePoint opened;
    int held = 0;  // refusals since `opened` not logged
  };
  const core::Clock& clock_;
  cluster::Log log_;
  core::Mutex mu_;
  std::map<std::string, Window> windows_ GLEANER_GUARDED_BY(mu_);
};

}  // namespace gleaner::server
