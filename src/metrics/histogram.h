#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

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
  mutable std::mutex mu_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bound, then +Inf (not cumulative)
  double sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace gleaner::metrics
