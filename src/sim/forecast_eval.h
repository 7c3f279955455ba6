#pragma once

#include <string>
#include <vector>

#include "core/units.h"
#include "sim/utilization_trace.h"

namespace gleaner::sim {

// How well one forecast of remaining quiet time did: mean pinball loss of
// each quantile (minutes; lower is better) and how often what really
// remained was at least the forecast (calibration: the p80 should cover
// 80 % of samples, the p50 half, the p20 a fifth).
struct ForecastScore {
  std::string name;
  double pinball_p80_min = 0, pinball_p50_min = 0, pinball_p20_min = 0;
  double pinball_mean_min = 0;  // of the three
  double covered_p80 = 0, covered_p50 = 0, covered_p20 = 0;
};

struct ForecastEvalReport {
  int64_t series = 0;
  int64_t samples = 0;
  core::Duration median_step{};
  core::Duration max_sample_gap{};
  // Quiet samples whose spell ended within the trace (what remained is
  // known), and of those, the ones gleaner forecast: every forecast is
  // scored on these.
  int64_t quiet_samples = 0;
  int64_t scored = 0;
  std::vector<ForecastScore> forecasts;  // gleaner first, then the baselines
};

// Replays every series in time order, all as one host's GPUs, and at each
// sample under `busy_pct` forecasts how much longer the series stays under
// it, from the spells that ended before that moment only: gleaner's
// IdleWindowForecast, and in the same run four baselines: persistence (as
// long again as it has been quiet), always the median of past spells, the
// distribution of remaining quiet time over all past quiet samples, and
// the same for past samples at the same hour of the week. A gap over three
// median steps ends a spell with no outcome. Pure.
ForecastEvalReport EvaluateForecast(const std::vector<UtilizationSeries>& series, double busy_pct);

}  // namespace gleaner::sim
