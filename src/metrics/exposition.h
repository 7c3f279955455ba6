#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/histogram.h"

namespace gleaner::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Writes the Prometheus text exposition format (version 0.0.4): each
// family's HELP and TYPE once, then its samples. Label values are escaped;
// a family is declared before its samples, and each name once.
class Exposition {
 public:
  // `type`: "gauge", "counter", "histogram", "stateset" is written as gauge.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, const Labels& labels, double value);
  // name_bucket{le=...}, name_sum and name_count.
  void HistogramSamples(std::string_view name, const Labels& labels,
                        const Histogram::Snapshot& histogram);

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// gleaner_build_info{version, protocol, daemon} 1: which release serves
// the metrics (core::kVersion), the agent protocol it speaks, and which
// daemon it is.
void BuildInfo(Exposition& e, std::string_view daemon, int protocol);

// "a\"b" with backslash, quote and newline escaped, as label values need.
std::string EscapeLabelValue(std::string_view value);
// A number as Prometheus reads it: shortest round-trip form, "+Inf", "NaN".
std::string FormatValue(double value);

}  // namespace gleaner::metrics
