#pragma once

#include <cstdint>
#include <vector>

#include "core/mutex.h"

namespace gleaner::metrics {

// A Prometheus histogram: counts of observations at or below each upper
// bound, their sum and their count. Thread-safe.
class Histogram {
 public:
  // `bounds`: increasing upper bounds; +Inf is implied.
  explicit Histogram(std::vector<double> bounds);

  void Observe(double value);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf: observations <= bound
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;

 private:
  mutable core::Mutex mu_;
  const std::vector<double> bounds_;  // fixed at construction: read without the lock
  std::vector<uint64_t> counts_ GLEANER_GUARDED_BY(mu_);  // per bound, then +Inf (not cumulative)
  double sum_ GLEANER_GUARDED_BY(mu_) = 0;
  uint64_t count_ GLEANER_GUARDED_BY(mu_) = 0;
};

}  // namespace gleaner::metrics
