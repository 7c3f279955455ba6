#include "cli/eval_command.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/exit_codes.h"
#include "core/format.h"
#include "observe/idle_window_forecast.h"
#include "sim/forecast_eval.h"
#include "sim/idle_eval.h"

namespace gleaner::cli {

namespace {

CLI::App* AddEvalIdle(CLI::App* eval, EvalIdleOptions& options) {
  CLI::App* idle = eval->add_subcommand(
      "idle",
      "Replay a per-GPU utilization trace through the idle classifier and score its verdicts "
      "(does an idle GPU stay idle for 10 and 30 minutes?) beside four baselines and a "
      "reference that knows the future load");
  idle->add_option("--trace", options.trace,
                   "Utilization CSV, like alibaba-genai/pod_gpu_duty_cycle_anon.csv")
      ->required()
      ->check(CLI::ExistingFile);
  idle->add_option("--memory", options.memory,
                   "Matching GPU-memory CSV (pod_gpu_memory_used_bytes_anon.csv), optional")
      ->check(CLI::ExistingFile);
  idle->add_option("--verdicts", options.verdicts,
                   "Also write every sample's verdict as CSV: series,timestamp,utilization,state");
  idle->add_flag("--json", options.json, "Print the scores as JSON");
  idle->add_flag("--skip-bad-rows", options.skip_bad_rows,
                 "Skip (and count) rows that do not parse instead of stopping");
  idle->add_option("--busy-threshold", options.busy_threshold_pct,
                   "Utilization (%) at or above which a GPU is busy")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  idle->add_option("--idle-after", options.idle_after_s, "Seconds of quiet before idle")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  idle->add_option("--idle-after-with-history", options.idle_after_with_history_s,
                   "Seconds of quiet before idle once similar pauses are known")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0));
  idle->add_option("--min-confidence", options.min_confidence,
                   "Least chance of staying quiet for 10 minutes that is called idle")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  return idle;
}

CLI::App* AddEvalForecast(CLI::App* eval, EvalForecastOptions& options) {
  CLI::App* forecast = eval->add_subcommand(
      "forecast",
      "Replay a per-GPU utilization trace and score how well gleaner forecasts how much longer "
      "each quiet GPU stays quiet (pinball loss, calibration) beside four baselines");
  forecast
      ->add_option("--trace", options.trace,
                   "Utilization CSV, like alibaba-genai/pod_gpu_duty_cycle_anon.csv")
      ->required()
      ->check(CLI::ExistingFile);
  forecast->add_flag("--json", options.json, "Print the scores as JSON");
  forecast->add_flag("--skip-bad-rows", options.skip_bad_rows,
                     "Skip (and count) rows that do not parse instead of stopping");
  forecast
      ->add_option("--busy-threshold", options.busy_threshold_pct,
                   "Utilization (%) at or above which a GPU is busy")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  return forecast;
}

nlohmann::json ScoreJson(const sim::IdleScore& s) {
  return {{"name", s.name},
          {"precision_10m", s.precision_10m},
          {"recall_10m", s.recall_10m},
          {"f1_10m", s.f1_10m},
          {"precision_30m", s.precision_30m},
          {"recall_30m", s.recall_30m},
          {"f1_30m", s.f1_30m},
          {"idle_time_captured", s.idle_time_captured},
          {"idle_verdicts", s.idle_verdicts}};
}

// What both replays say of the trace itself: its size, its sampling and
// what the reader cleaned.
template <typename Report>
nlohmann::json TraceJson(const std::string& trace, const Report& report,
                         const sim::TraceCleaning& cleaning) {
  nlohmann::json doc;
  doc["trace"] = trace;
  doc["series"] = report.series;
  doc["samples"] = report.samples;
  doc["median_step_s"] = core::ToSecondsDouble(report.median_step);
  doc["max_sample_gap_s"] = core::ToSecondsDouble(report.max_sample_gap);
  doc["cleaning"] = {{"rows", cleaning.rows},
                     {"duplicate_times", cleaning.duplicate_times},
                     {"non_finite", cleaning.non_finite},
                     {"bad_rows_skipped", cleaning.bad_rows_skipped}};
  return doc;
}

template <typename Report>
void PrintTrace(std::ostream& out, const char* command, const Report& report,
                const sim::TraceCleaning& cleaning) {
  out << "gleaner " << command << ": " << report.series << " series, " << report.samples
      << " samples, median step " << core::FormatDuration(report.median_step) << " (gaps over "
      << core::FormatDuration(report.max_sample_gap) << ")\n";
  if (cleaning.duplicate_times + cleaning.non_finite + cleaning.bad_rows_skipped > 0) {
    out << "cleaned: " << cleaning.duplicate_times << " duplicate times, " << cleaning.non_finite
        << " non-finite values, " << cleaning.bad_rows_skipped << " bad rows skipped\n";
  }
}

}  // namespace

EvalCommands AddEvalCommands(CLI::App& app, EvalIdleOptions& idle, EvalForecastOptions& forecast) {
  CLI::App* eval = app.add_subcommand("eval", "Measure gleaner's decisions against real traces");
  eval->require_subcommand(1);
  return {AddEvalIdle(eval, idle), AddEvalForecast(eval, forecast)};
}

int RunEvalIdle(const EvalIdleOptions& options, std::ostream& out, std::ostream& err) {
  sim::TraceCleaning cleaning;
  auto series =
      sim::ReadUtilizationTrace(options.trace, options.memory, options.skip_bad_rows, &cleaning);
  if (!series.ok()) {
    err << "gleaner: " << series.status().message() << "\n";
    return kExitBadInput;
  }
  observe::IdleConfig config;
  config.busy_utilization_pct = options.busy_threshold_pct;
  config.idle_after = core::Duration(static_cast<int64_t>(options.idle_after_s * 1e6));
  config.idle_after_with_history =
      core::Duration(static_cast<int64_t>(options.idle_after_with_history_s * 1e6));
  config.min_confidence = options.min_confidence;

  std::ofstream verdicts;
  sim::VerdictSink sink;
  if (!options.verdicts.empty()) {
    verdicts.open(options.verdicts);
    if (!verdicts) {
      err << "gleaner: cannot write " << options.verdicts << "\n";
      return kExitFailure;
    }
    verdicts << "series,timestamp,utilization,state\n";
    sink = [&verdicts](const sim::UtilizationSeries& s, const sim::UtilizationPoint& p,
                       observe::GpuState state) {
      char time[32];
      std::snprintf(time, sizeof time, "%.3f", static_cast<double>(core::ToUnixMicros(p.at)) / 1e6);
      verdicts << s.id << ',' << time << ',' << p.utilization_pct << ','
               << observe::GpuStateName(state) << '\n';
    };
  }
  const sim::IdleEvalReport report = sim::EvaluateIdle(*series, config, sink);

  if (options.json) {
    nlohmann::json doc = TraceJson(options.trace, report, cleaning);
    doc["classifiers"] = nlohmann::json::array();
    for (const sim::IdleScore& s : report.classifiers) doc["classifiers"].push_back(ScoreJson(s));
    doc["hindsight"] = ScoreJson(report.hindsight);
    out << doc.dump(2) << "\n";
    return kExitOk;
  }
  PrintTrace(out, "eval idle", report, cleaning);
  char line[160];
  std::snprintf(line, sizeof line, "%-18s %7s %7s %7s %7s %7s %7s %9s\n", "classifier", "P@10m",
                "R@10m", "F1@10m", "P@30m", "R@30m", "F1@30m", "idle-time");
  out << line;
  const auto row = [&](const sim::IdleScore& s) {
    std::snprintf(
        line, sizeof line, "%-18s %7s %7s %7s %7s %7s %7s %9s\n", s.name.c_str(),
        core::FormatFixed(s.precision_10m, 3).c_str(), core::FormatFixed(s.recall_10m, 3).c_str(),
        core::FormatFixed(s.f1_10m, 3).c_str(), core::FormatFixed(s.precision_30m, 3).c_str(),
        core::FormatFixed(s.recall_30m, 3).c_str(), core::FormatFixed(s.f1_30m, 3).c_str(),
        core::FormatFixed(s.idle_time_captured, 3).c_str());
    out << line;
  };
  for (const sim::IdleScore& s : report.classifiers) row(s);
  out << "for reference, a rule that knows the future load: quiet samples ranked by their "
         "series'\nburst rate over the hour before and the hour after the 10 minutes judged, cut "
         "at recall >= "
      << core::FormatFixed(sim::kHindsightRecall, 3) << "\n";
  row(report.hindsight);
  return kExitOk;
}

int RunEvalForecast(const EvalForecastOptions& options, std::ostream& out, std::ostream& err) {
  sim::TraceCleaning cleaning;
  auto series = sim::ReadUtilizationTrace(options.trace, "", options.skip_bad_rows, &cleaning);
  if (!series.ok()) {
    err << "gleaner: " << series.status().message() << "\n";
    return kExitBadInput;
  }
  const sim::ForecastEvalReport report = sim::EvaluateForecast(*series, options.busy_threshold_pct);
  if (options.json) {
    nlohmann::json doc = TraceJson(options.trace, report, cleaning);
    doc["quiet_samples"] = report.quiet_samples;
    doc["scored"] = report.scored;
    doc["forecasts"] = nlohmann::json::array();
    for (const sim::ForecastScore& f : report.forecasts) {
      doc["forecasts"].push_back({{"name", f.name},
                                  {"pinball_p80_min", f.pinball_p80_min},
                                  {"pinball_p50_min", f.pinball_p50_min},
                                  {"pinball_p20_min", f.pinball_p20_min},
                                  {"pinball_mean_min", f.pinball_mean_min},
                                  {"covered_p80", f.covered_p80},
                                  {"covered_p50", f.covered_p50},
                                  {"covered_p20", f.covered_p20}});
    }
    out << doc.dump(2) << "\n";
    return kExitOk;
  }
  PrintTrace(out, "eval forecast", report, cleaning);
  out << report.quiet_samples << " quiet samples whose spell ended in the trace; " << report.scored
      << " forecast by gleaner (the rest had under " << observe::IdleWindowForecast::kMinSpells
      << " past spells that long), every forecast scored on those\n"
      << "pinball loss in minutes (lower is better); covered: share whose remaining quiet was at "
         "least the forecast (ideal 0.80, 0.50, 0.20)\n";
  char line[200];
  std::snprintf(line, sizeof line, "%-18s %9s %9s %9s %9s %8s %8s %8s\n", "forecast", "loss-p80",
                "loss-p50", "loss-p20", "loss-mean", "cov-p80", "cov-p50", "cov-p20");
  out << line;
  for (const sim::ForecastScore& f : report.forecasts) {
    std::snprintf(line, sizeof line, "%-18s %9.2f %9.2f %9.2f %9.2f %8s %8s %8s\n", f.name.c_str(),
                  f.pinball_p80_min, f.pinball_p50_min, f.pinball_p20_min, f.pinball_mean_min,
                  core::FormatFixed(f.covered_p80, 3).c_str(),
                  core::FormatFixed(f.covered_p50, 3).c_str(),
                  core::FormatFixed(f.covered_p20, 3).c_str());
    out << line;
  }
  return kExitOk;
}

}  // namespace gleaner::cli
