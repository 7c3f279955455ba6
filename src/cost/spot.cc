#include "cost/spot.h"

#include <algorithm>
#include <cmath>

#include "cost/catalog.h"

namespace gleaner::cost {

SpotBand DefaultSpotBand(std::string_view gpu_model) {
  const std::string r = ReduceGpuModel(gpu_model);
  constexpr const char* kAdvisor =
      "AWS Spot Instance Advisor bands read by thundercompute.com (2025-05-01, 2026-02-24)";
  if (r.starts_with("A100")) return {0.10, "5-10 %/month (p4d)", kAdvisor};
  if (r.starts_with("H100") || r.starts_with("H200")) {
    return {0.20, "15-20 %/month (p5)", kAdvisor};
  }
  if (r.starts_with("L4")) return {0.05, "<5 %/month (g6)", kAdvisor};
  if (r.starts_with("A10G")) {
    return {0.20, "up to 15-20 %/month (g5)", "cloudprice.app blog (2026)"};
  }
  return {0.30, ">20 %/month, taken as 30 %", "assumption (no band known for this GPU)"};
}

double MtbfHoursFromMonthlyFraction(double monthly_fraction) {
  return 730.0 / -std::log1p(-monthly_fraction);
}

double YoungDalyIntervalHours(double checkpoint_cost_h, double mtbf_h) {
  return std::sqrt(2.0 * checkpoint_cost_h * mtbf_h);
}

SpotEstimate EstimateSpot(double work_h, int instances, double monthly_fraction,
                          double checkpoint_cost_h, double restart_h,
                          std::optional<double> interval_h) {
  SpotEstimate e;
  e.job_mtbf_h = MtbfHoursFromMonthlyFraction(monthly_fraction) / std::max(1, instances);
  e.optimal_interval_h = YoungDalyIntervalHours(checkpoint_cost_h, e.job_mtbf_h);
  e.interval_h = interval_h ? *interval_h : std::min(e.optimal_interval_h, work_h);
  // A job no longer than its interval writes no checkpoint and loses, on
  // average, half of what it ran when interrupted.
  e.checkpoint_overhead_h =
      e.interval_h >= work_h ? 0.0 : work_h * checkpoint_cost_h / e.interval_h;
  e.expected_interruptions = (work_h + e.checkpoint_overhead_h) / e.job_mtbf_h;
  e.lost_per_interruption_h = std::min(e.interval_h, work_h) / 2.0 + restart_h;
  e.expected_wall_h =
      work_h + e.checkpoint_overhead_h + e.expected_interruptions * e.lost_per_interruption_h;
  return e;
}

}  // namespace gleaner::cost
