#include "metrics/exposition.h"

#include <charconv>
#include <cmath>

#include "core/version.h"

namespace gleaner::metrics {

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

void Exposition::Family(std::string_view name, std::string_view type, std::string_view help) {
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  text_ += help;
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void Exposition::Sample(std::string_view name, const Labels& labels, double value) {
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) text_ += ',';
      text_ += labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + '"';
    }
    text_ += '}';
  }
  text_ += ' ' + FormatValue(value) + '\n';
}

void Exposition::HistogramSamples(std::string_view name, const Labels& labels,
                                  const Histogram::Snapshot& h) {
  const std::string base(name);
  for (size_t i = 0; i < h.cumulative.size(); ++i) {
    Labels with_le = labels;
    with_le.emplace_back("le", i < h.bounds.size() ? FormatValue(h.bounds[i]) : "+Inf");
    Sample(base + "_bucket", with_le, static_cast<double>(h.cumulative[i]));
  }
  Sample(base + "_sum", labels, h.sum);
  Sample(base + "_count", labels, static_cast<double>(h.count));
}

void BuildInfo(Exposition& e, std::string_view daemon, int protocol) {
  e.Family(
      "gleaner_build_info", "gauge",
      "1, labelled with the release, the agent protocol it speaks and which daemon serves it.");
  e.Sample("gleaner_build_info",
           {{"version", std::string(core::Version())},
            {"commit", std::string(core::BuildCommit())},
            {"protocol", std::to_string(protocol)},
            {"daemon", std::string(daemon)}},
           1);
}

}  // namespace gleaner::metrics
