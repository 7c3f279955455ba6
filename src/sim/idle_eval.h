#pragma once

#include <functional>
#include <string>
#include <vector>

#include "observe/idle_config.h"
#include "observe/verdict.h"
#include "sim/utilization_trace.h"

namespace gleaner::sim {

// How well one way of calling GPUs idle did on a trace. A verdict "idle" at
// a sample is right when the series then stays under the busy threshold
// for the next 10 (30) minutes; samples closer than that to their series'
// end are left out.
struct IdleScore {
  std::string name;
  double precision_10m = 0, recall_10m = 0, f1_10m = 0;
  double precision_30m = 0, recall_30m = 0, f1_30m = 0;
  // Of the time series spent under the threshold, the share with an idle
  // verdict: how much of the idle GPU-time the verdicts would let us use.
  double idle_time_captured = 0;
  int64_t idle_verdicts = 0;
};

struct IdleEvalReport {
  int64_t series = 0;
  int64_t samples = 0;
  core::Duration median_step{};
  core::Duration max_sample_gap{};     // what the run treated as a gap
  std::vector<IdleScore> classifiers;  // gleaner first, then the baselines
  // Not a rule anyone could run: it knows each series' load of the hour
  // before and the hour after the horizon (see EvaluateIdle). How far a
  // perfect load forecast gets shows how much of the remaining error is
  // bursts no history can foresee.
  IdleScore hindsight;
};

// The recall at which the hindsight bound is read: the idle verdict's
// target is stated as a precision at this recall.
inline constexpr double kHindsightRecall = 0.75;

// Called for every sample with gleaner's verdict, in time order per series.
using VerdictSink =
    std::function<void(const UtilizationSeries&, const UtilizationPoint&, observe::GpuState)>;

// Replays every series through gleaner's IdleClassifier (one classifier for
// all series, as one host's GPUs: what it learns about pauses is shared)
// and, in the same run, through three baselines: instantaneous utilization
// under the threshold; Run:ai's rule (only exact-zero samples over the last
// 30 s); dstack's rule (every sample under the threshold for a fixed window,
// 5 minutes, and 10 minutes as a fourth). The classifier's max_sample_gap is
// set to three median sample steps of the trace.
//
// Beside them, the hindsight bound: every sample under the threshold is
// ranked by its series' rate of bursts (samples at or above the threshold
// after one under it) over the hour before it and the hour after its
// 10-minute horizon, the horizon itself left out; the quietest are called
// idle, down to the rate that gives the best 10-minute precision at recall
// >= kHindsightRecall. Pure.
IdleEvalReport EvaluateIdle(const std::vector<UtilizationSeries>& series,
                            observe::IdleConfig config, const VerdictSink& sink = {});

}  // namespace gleaner::sim
