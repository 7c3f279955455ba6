#include "sim/cross_cluster.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "sim/trace_csv.h"

namespace gleaner::sim {
namespace {

// Integer shares of `target` in proportion to `weight`, each capped by
// `cap` (cap[i] <= weight[i]; sum(cap) >= target): water-filling. Items
// whose cap is below the common rate weight * lambda get their cap; the
// rest get lambda * weight, rounded by largest remainder. All in integers,
// so the split is exact and the same on every machine.
std::vector<int64_t> WaterFill(const std::vector<int64_t>& weight, const std::vector<int64_t>& cap,
                               int64_t target) {
  std::vector<int64_t> out(weight.size(), 0);
  std::vector<size_t> order;
  for (size_t i = 0; i < weight.size(); ++i) {
    if (weight[i] > 0 && cap[i] > 0) order.push_back(i);
  }
  // Ascending cap / weight, by cross-multiplication; ties by index.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cap[a] * weight[b] < cap[b] * weight[a]; });
  int64_t rest = target;
  int64_t rest_weight = 0;
  for (size_t i : order) rest_weight += weight[i];
  size_t first_open = 0;
  // Capping an item whose cap / weight is at most the current rate can only
  // raise the rate for the others, so the capped ones are a prefix.
  while (first_open < order.size()) {
    const size_t i = order[first_open];
    if (cap[i] * rest_weight > rest * weight[i]) break;
    out[i] = cap[i];
    rest -= cap[i];
    rest_weight -= weight[i];
    ++first_open;
  }
  if (first_open == order.size()) {
    if (rest != 0) std::abort();  // sum(cap) < target: the caller broke the contract
    return out;
  }
  std::vector<std::pair<int64_t, size_t>> remainders;  // (remainder, index)
  int64_t given = 0;
  for (size_t k = first_open; k < order.size(); ++k) {
    const size_t i = order[k];
    out[i] = rest * weight[i] / rest_weight;
    given += out[i];
    remainders.emplace_back(rest * weight[i] % rest_weight, i);
  }
  std::sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  // Fewer leftover units than items with a remainder, and each such item
  // sits strictly below its cap, so one more unit each stays within it.
  for (int64_t k = 0; k < rest - given; ++k) ++out[remainders[static_cast<size_t>(k)].second];
  return out;
}

double Hours(int64_t gpu_minutes) {
  return std::round(static_cast<double>(gpu_minutes) / 60.0 * 1000) / 1000;
}
double Share(int64_t part, int64_t whole) {
  return whole > 0 ? std::round(static_cast<double>(part) / static_cast<double>(whole) * 1e6) / 1e6
                   : 0.0;
}

std::string TimeRange(const HeliosVc& vc) {
  return vc.name + " " + FormatDateTime(vc.minutes.front().t_s) + " to " +
         FormatDateTime(vc.minutes.back().t_s);
}

}  // namespace

// The flow network: source -> pending node v (capacity P_v) -> idle node u
// for every u != v (unbounded) -> sink (capacity I_u). Its maximum flow is
// its minimum cut. Let A be the pending nodes on the source side of a cut
// and B the idle nodes there. A finite cut has no unbounded edge from A to
// outside B, so B holds every u != v for each v in A; its capacity is
// sum_{v not in A} P_v + sum_{u in B} I_u, least when B is as small as that
// allows:
//   A empty:        B empty,            capacity P;
//   A = {w}:        B = all but w,      capacity P - P_w + I - I_w;
//   |A| >= 2:       B = all,            capacity sum_{v not in A} P_v + I >= I,
//                                       with A = all giving I.
// The least over all cuts is min(P, I, P + I - max_w(P_w + I_w)).
int64_t LendableGpus(const std::vector<int64_t>& pending, const std::vector<int64_t>& idle) {
  int64_t p = 0;
  int64_t i = 0;
  int64_t largest = 0;
  for (size_t v = 0; v < pending.size() && v < idle.size(); ++v) {
    p += pending[v];
    i += idle[v];
    largest = std::max(largest, pending[v] + idle[v]);
  }
  return std::min({p, i, p + i - largest});
}

// Which split: with F the flow, exactly one of these holds (checked in order).
//   F = P: every pending GPU is served; lending is what is shared out.
//   F = I: every idle GPU is used; borrowing is shared out.
//   else F = P + I - (P_w + I_w) for one VC w (two could not both reach
//        the max, or F would equal P or I): every edge not touching w's own
//        pair is saturated, so the split is forced.
// A split (borrow, lend) is a flow when borrow[v] + lend[v] <= F for every
// v: that is the same cut argument applied to capacities borrow and lend.
void SplitLendable(const std::vector<int64_t>& pending, const std::vector<int64_t>& idle,
                   int64_t flow, std::vector<int64_t>* borrow, std::vector<int64_t>* lend) {
  const size_t n = pending.size();
  const int64_t p = std::accumulate(pending.begin(), pending.end(), int64_t{0});
  const int64_t i = std::accumulate(idle.begin(), idle.end(), int64_t{0});
  std::vector<int64_t> cap(n);
  if (flow == p) {
    *borrow = pending;
    for (size_t v = 0; v < n; ++v) cap[v] = std::min(idle[v], flow - pending[v]);
    *lend = WaterFill(idle, cap, flow);
  } else if (flow == i) {
    *lend = idle;
    for (size_t v = 0; v < n; ++v) cap[v] = std::min(pending[v], flow - idle[v]);
    *borrow = WaterFill(pending, cap, flow);
  } else {
    size_t w = 0;
    for (size_t v = 1; v < n; ++v) {
      if (pending[v] + idle[v] > pending[w] + idle[w]) w = v;
    }
    *borrow = pending;
    *lend = idle;
    (*borrow)[w] = i - idle[w];
    (*lend)[w] = p - pending[w];
  }
}

core::Result<CrossClusterStudy> RunCrossClusterStudy(const std::vector<HeliosVc>& vcs) {
  if (vcs.empty()) {
    return core::InvalidArgument("no virtual clusters to compare; expected at least one vc*.csv");
  }
  CrossClusterStudy study;
  std::vector<int64_t> all;
  for (const HeliosVc& vc : vcs) {
    if (vc.minutes.empty()) {
      return core::InvalidArgument(vc.name + " has no minutes; expected at least one row");
    }
    for (const HeliosMinute& m : vc.minutes) all.push_back(m.t_s);
    CrossVcTotals totals;
    totals.name = vc.name;
    for (const HeliosMinute& m : vc.minutes) totals.gpus = std::max(totals.gpus, m.total_gpus);
    study.vcs.push_back(totals);
    study.rows += vc.cleaning.rows;
    study.duplicate_times += vc.cleaning.duplicate_times;
    study.bad_rows_skipped += vc.cleaning.bad_rows_skipped;
  }
  std::sort(all.begin(), all.end());
  std::vector<int64_t> aligned;
  for (size_t a = 0; a < all.size();) {
    size_t b = a;
    while (b < all.size() && all[b] == all[a]) ++b;
    // Each VC's minutes are strictly increasing, so a count of n is every VC.
    if (b - a == vcs.size()) {
      aligned.push_back(all[a]);
    } else {
      ++study.minutes_dropped_unaligned;
    }
    a = b;
  }
  if (aligned.empty()) {
    std::string ranges;
    for (const HeliosVc& vc : vcs) ranges += (ranges.empty() ? "" : "; ") + TimeRange(vc);
    return core::InvalidArgument(
        "no minute is present in every virtual cluster (" + ranges +
        "); expected files covering a common period, minute stamps on the same seconds");
  }

  const size_t n = vcs.size();
  std::vector<size_t> cursor(n, 0);
  std::vector<int64_t> pending(n), idle(n), small(n), borrow, lend;
  study.minutes.reserve(aligned.size());
  for (int64_t t : aligned) {
    CrossMinute cm;
    cm.t_s = t;
    for (size_t v = 0; v < n; ++v) {
      const std::vector<HeliosMinute>& ms = vcs[v].minutes;
      while (ms[cursor[v]].t_s < t) ++cursor[v];
      const HeliosMinute& m = ms[cursor[v]];
      pending[v] = m.pending_gpus;
      idle[v] = m.idle_gpus;
      small[v] = m.pending_gpus_small;
      cm.pending_gpus += pending[v];
      cm.idle_gpus += idle[v];
      cm.pending_small_gpus += small[v];
      study.vcs[v].pending_gpu_minutes += pending[v];
      study.vcs[v].idle_gpu_minutes += idle[v];
    }
    cm.lendable_gpus = LendableGpus(pending, idle);
    cm.lendable_small_gpus = LendableGpus(small, idle);
    bool beside = false;
    for (size_t v = 0; v < n && !beside; ++v) {
      for (size_t u = 0; u < n && !beside; ++u) beside = u != v && pending[v] > 0 && idle[u] > 0;
    }
    study.minutes_pending_beside_idle += beside ? 1 : 0;
    SplitLendable(pending, idle, cm.lendable_gpus, &borrow, &lend);
    for (size_t v = 0; v < n; ++v) {
      study.vcs[v].borrow_gpu_minutes += borrow[v];
      study.vcs[v].lend_gpu_minutes += lend[v];
    }
    study.pending_gpu_minutes += cm.pending_gpus;
    study.idle_gpu_minutes += cm.idle_gpus;
    study.lendable_gpu_minutes += cm.lendable_gpus;
    study.pending_small_gpu_minutes += cm.pending_small_gpus;
    study.lendable_small_gpu_minutes += cm.lendable_small_gpus;
    study.minutes.push_back(cm);
  }
  return study;
}

nlohmann::ordered_json CrossClusterMetricsJson(const CrossClusterStudy& s) {
  nlohmann::ordered_json j;
  const int64_t minutes = static_cast<int64_t>(s.minutes.size());
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  int64_t gpus = 0;
  for (const CrossVcTotals& vc : s.vcs) {
    names.push_back(vc.name);
    gpus += vc.gpus;
  }
  j["vcs"] = names;
  j["gpus"] = gpus;
  j["first_minute"] = s.minutes.empty() ? "" : FormatDateTime(s.minutes.front().t_s);
  j["last_minute"] = s.minutes.empty() ? "" : FormatDateTime(s.minutes.back().t_s);
  j["minutes"] = minutes;
  j["minutes_dropped_unaligned"] = s.minutes_dropped_unaligned;
  j["rows"] = s.rows;
  j["duplicate_times"] = s.duplicate_times;
  j["skipped_rows"] = s.bad_rows_skipped;
  j["minutes_pending_beside_idle"] = s.minutes_pending_beside_idle;
  j["share_minutes_pending_beside_idle"] = Share(s.minutes_pending_beside_idle, minutes);
  j["idle_gpu_hours"] = Hours(s.idle_gpu_minutes);
  j["pending_gpu_hours"] = Hours(s.pending_gpu_minutes);
  j["lendable_gpu_hours"] = Hours(s.lendable_gpu_minutes);
  j["pending_small_gpu_hours"] = Hours(s.pending_small_gpu_minutes);
  j["lendable_small_gpu_hours"] = Hours(s.lendable_small_gpu_minutes);
  j["pending_gpu_hours_after"] = Hours(s.pending_gpu_minutes - s.lendable_gpu_minutes);
  j["pending_reduction_share"] = Share(s.lendable_gpu_minutes, s.pending_gpu_minutes);
  const auto mean = [&](int64_t gpu_minutes) {
    return minutes > 0 ? std::round(static_cast<double>(gpu_minutes) /
                                    static_cast<double>(minutes) * 1000) /
                             1000
                       : 0.0;
  };
  j["mean_pending_gpus_before"] = mean(s.pending_gpu_minutes);
  j["mean_pending_gpus_after"] = mean(s.pending_gpu_minutes - s.lendable_gpu_minutes);
  nlohmann::ordered_json per_vc = nlohmann::ordered_json::array();
  for (const CrossVcTotals& vc : s.vcs) {
    nlohmann::ordered_json v;
    v["vc"] = vc.name;
    v["gpus"] = vc.gpus;
    v["pending_gpu_hours"] = Hours(vc.pending_gpu_minutes);
    v["idle_gpu_hours"] = Hours(vc.idle_gpu_minutes);
    v["borrow_gpu_hours"] = Hours(vc.borrow_gpu_minutes);
    v["lend_gpu_hours"] = Hours(vc.lend_gpu_minutes);
    per_vc.push_back(v);
  }
  j["per_vc"] = per_vc;
  return j;
}

}  // namespace gleaner::sim
