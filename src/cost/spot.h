#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gleaner::cost {

// The chance that a spot instance is interrupted within a month, as AWS's
// Spot Instance Advisor bands report it, with where the figure comes from.
struct SpotBand {
  double monthly_fraction = 0;  // e.g. 0.10 for the upper end of "5-10 %"
  std::string label;            // "5-10 %/month"
  std::string source;
};

// The band for a GPU family: A100 5-10 %, H100/H200 15-20 %, L4 <5 %,
// A10G 15-20 %, anything else ">20 %" taken as 30 % (assumption). The upper
// end of each band is used, to err towards cost.
SpotBand DefaultSpotBand(std::string_view gpu_model);

// One instance's mean time between interruptions in hours: with p the
// monthly fraction, the hourly hazard is -ln(1 - p) / 730.
double MtbfHoursFromMonthlyFraction(double monthly_fraction);

// Young/Daly's optimal checkpoint interval sqrt(2 * C * M), hours.
double YoungDalyIntervalHours(double checkpoint_cost_h, double mtbf_h);

// The expected wall time of `work_h` hours of work on `instances` spot
// instances that all must survive (one interruption stops the job).
struct SpotEstimate {
  double job_mtbf_h = 0;               // one instance's MTBF / instances
  double optimal_interval_h = 0;       // Young/Daly for job_mtbf_h
  double interval_h = 0;               // the interval used (given, or optimal capped at work_h)
  double checkpoint_overhead_h = 0;    // work_h * C / interval (0 when interval >= work)
  double expected_interruptions = 0;   // (work + checkpoint overhead) / job MTBF
  double lost_per_interruption_h = 0;  // interval / 2 + restart
  double expected_wall_h = 0;          // work + overhead + interruptions * lost
};
SpotEstimate EstimateSpot(double work_h, int instances, double monthly_fraction,
                          double checkpoint_cost_h, double restart_h,
                          std::optional<double> interval_h);

}  // namespace gleaner::cost
