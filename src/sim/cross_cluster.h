#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/helios_trace.h"

namespace gleaner::sim {

// The cross-cluster study (docs/simulator.md, "gleaner sim cross-cluster"):
// on per-minute virtual-cluster (VC) series, how many pending GPUs could
// have run on other VCs' idle GPUs, and what that would have done to the
// pending GPU-hours. Pure: no I/O, no clock.

// The most GPUs that can be lent across VCs in one minute: the maximum flow
// from pending GPUs of VC v to idle GPUs of any VC u != v, which is
//   min(P, I, P + I - max_v(P_v + I_v)),  P = sum of pending, I = sum of idle
// (the proof is beside the code). `pending` and `idle` have one entry per VC,
// each >= 0; 0 when there are fewer than two VCs.
int64_t LendableGpus(const std::vector<int64_t>& pending, const std::vector<int64_t>& idle);

// One way to realise that flow, VC by VC: borrow[v] GPUs of v's pending run
// on other VCs, lend[v] of v's idle GPUs serve other VCs. Always a feasible
// flow: sum(borrow) = sum(lend) = `flow`, borrow[v] <= pending[v],
// lend[v] <= idle[v] and borrow[v] + lend[v] <= flow (a VC never lends to
// itself). When more than one split exists, the side that is not used up
// is shared in proportion to pending (borrowing) or idle (lending) GPUs,
// capped by what each VC can take or give, and rounded to whole GPUs by
// largest remainder, ties to the lower index. `flow` must be
// LendableGpus(pending, idle).
void SplitLendable(const std::vector<int64_t>& pending, const std::vector<int64_t>& idle,
                   int64_t flow, std::vector<int64_t>* borrow, std::vector<int64_t>* lend);

// One aligned minute, summed over the VCs.
struct CrossMinute {
  int64_t t_s = 0;
  int64_t pending_gpus = 0;
  int64_t idle_gpus = 0;
  int64_t lendable_gpus = 0;        // LendableGpus of the minute
  int64_t pending_small_gpus = 0;   // of jobs of < 8 GPUs
  int64_t lendable_small_gpus = 0;  // LendableGpus of small-job pending and all idle
};

// One VC over the aligned minutes. GPU-minutes: each row stands for a minute.
struct CrossVcTotals {
  std::string name;
  int32_t gpus = 0;  // the largest total_gpus it reported
  int64_t pending_gpu_minutes = 0;
  int64_t idle_gpu_minutes = 0;
  int64_t borrow_gpu_minutes = 0;  // its pending GPUs that ran elsewhere (SplitLendable)
  int64_t lend_gpu_minutes = 0;    // its idle GPUs that served others
};

struct CrossClusterStudy {
  std::vector<CrossMinute> minutes;  // the minutes every VC has, in time order
  // Distinct minutes some VC has but not all: left out of everything.
  int64_t minutes_dropped_unaligned = 0;
  // Minutes where some VC had pending GPUs while another had idle ones
  // (the same minutes as those with lendable_gpus > 0).
  int64_t minutes_pending_beside_idle = 0;
  int64_t pending_gpu_minutes = 0;
  int64_t idle_gpu_minutes = 0;
  int64_t lendable_gpu_minutes = 0;
  int64_t pending_small_gpu_minutes = 0;
  int64_t lendable_small_gpu_minutes = 0;
  std::vector<CrossVcTotals> vcs;  // in the order given
  // What the readers cleaned, summed over the VCs.
  int64_t rows = 0;
  int64_t duplicate_times = 0;
  int64_t bad_rows_skipped = 0;
};

// Runs the study. InvalidArgument when `vcs` is empty or no minute is
// present in every VC (the message names the VCs' time ranges).
core::Result<CrossClusterStudy> RunCrossClusterStudy(const std::vector<HeliosVc>& vcs);

// metrics.json: every key documented in docs/simulator.md; only numbers
// that follow from the trace (no paths, no wall times), so identical runs
// give identical bytes.
nlohmann::ordered_json CrossClusterMetricsJson(const CrossClusterStudy& study);

// report.html: a self-contained page (inline CSS and SVG) with the headline
// numbers, pending vs lendable-elsewhere GPUs over time (per-hour means)
// and a per-VC bar chart of borrowed and lent GPU-hours. Deterministic.
std::string RenderCrossClusterReport(const CrossClusterStudy& study);

}  // namespace gleaner::sim
