// The cross-cluster study: the closed form of the lending flow against a
// brute-force maximum flow, the per-VC split is always a feasible flow, and
// a tiny three-VC month worked out by hand.
#include "sim/cross_cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

namespace gleaner::sim {
namespace {

// Edmonds-Karp on an adjacency matrix: source -> pending node v (P_v) ->
// idle node u != v (unbounded) -> sink (I_u).
int64_t BruteForceMaxFlow(const std::vector<int64_t>& pending, const std::vector<int64_t>& idle) {
  const size_t n = pending.size();
  const size_t nodes = 2 * n + 2;
  const size_t source = 2 * n;
  const size_t sink = 2 * n + 1;
  const int64_t unbounded = std::numeric_limits<int32_t>::max();
  std::vector<std::vector<int64_t>> cap(nodes, std::vector<int64_t>(nodes, 0));
  for (size_t v = 0; v < n; ++v) {
    cap[source][v] = pending[v];
    cap[n + v][sink] = idle[v];
    for (size_t u = 0; u < n; ++u) {
      if (u != v) cap[v][n + u] = unbounded;
    }
  }
  int64_t flow = 0;
  while (true) {
    std::vector<size_t> parent(nodes, nodes);
    parent[source] = source;
    std::vector<size_t> queue = {source};
    for (size_t q = 0; q < queue.size() && parent[sink] == nodes; ++q) {
      for (size_t next = 0; next < nodes; ++next) {
        if (parent[next] == nodes && cap[queue[q]][next] > 0) {
          parent[next] = queue[q];
          queue.push_back(next);
        }
      }
    }
    if (parent[sink] == nodes) return flow;
    int64_t push = unbounded;
    for (size_t at = sink; at != source; at = parent[at]) {
      push = std::min(push, cap[parent[at]][at]);
    }
    for (size_t at = sink; at != source; at = parent[at]) {
      cap[parent[at]][at] -= push;
      cap[at][parent[at]] += push;
    }
    flow += push;
  }
}

TEST(CrossClusterTest, TheClosedFormIsTheMaximumFlow) {
  std::mt19937 rng(20210101);
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t n = 1 + rng() % 5;
    // Often zero, sometimes large: every branch of the min gets its turn.
    std::vector<int64_t> pending(n), idle(n);
    for (size_t v = 0; v < n; ++v) {
      pending[v] = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % (trial % 2 ? 9 : 40));
      idle[v] = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % 9);
    }
    ASSERT_EQ(LendableGpus(pending, idle), BruteForceMaxFlow(pending, idle)) << "trial " << trial;
  }
}

TEST(CrossClusterTest, OneVcLendsNothingToItself) {
  EXPECT_EQ(LendableGpus({5}, {7}), 0);
  EXPECT_EQ(LendableGpus({}, {}), 0);
  EXPECT_EQ(LendableGpus({5, 0}, {7, 3}), 3);
}

TEST(CrossClusterTest, TheSplitIsAlwaysAFeasibleFlow) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t n = 1 + rng() % 6;
    std::vector<int64_t> pending(n), idle(n);
    for (size_t v = 0; v < n; ++v) {
      pending[v] = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % 30);
      idle[v] = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % 30);
    }
    const int64_t flow = LendableGpus(pending, idle);
    std::vector<int64_t> borrow, lend;
    SplitLendable(pending, idle, flow, &borrow, &lend);
    ASSERT_EQ(borrow.size(), n);
    ASSERT_EQ(lend.size(), n);
    EXPECT_EQ(std::accumulate(borrow.begin(), borrow.end(), int64_t{0}), flow) << trial;
    EXPECT_EQ(std::accumulate(lend.begin(), lend.end(), int64_t{0}), flow) << trial;
    for (size_t v = 0; v < n; ++v) {
      EXPECT_GE(borrow[v], 0);
      EXPECT_GE(lend[v], 0);
      EXPECT_LE(borrow[v], pending[v]);
      EXPECT_LE(lend[v], idle[v]);
    }
    // The split itself carries the whole flow through the network.
    EXPECT_EQ(BruteForceMaxFlow(borrow, lend), flow) << "trial " << trial;
  }
}

TEST(CrossClusterTest, TheSplitSharesInProportionWhenItCan) {
  // Pending 4 in a; idle 2 in b and 6 in c: all 4 are served, and the
  // lending is shared 2 : 6, so b lends 1 and c lends 3.
  std::vector<int64_t> borrow, lend;
  SplitLendable({4, 0, 0}, {0, 2, 6}, 4, &borrow, &lend);
  EXPECT_EQ(borrow, (std::vector<int64_t>{4, 0, 0}));
  EXPECT_EQ(lend, (std::vector<int64_t>{0, 1, 3}));
}

// minute: {pending, idle, pending_small} per VC a, b, c.
HeliosVc Vc(const std::string& name, const std::vector<std::array<int32_t, 4>>& rows) {
  HeliosVc vc;
  vc.name = name;
  for (const auto& [minute, pending, idle, small] : rows) {
    HeliosMinute m;
    m.t_s = 1588291200 + int64_t{minute} * 60;
    m.total_gpus = 16;
    m.pending_gpus = pending;
    m.idle_gpus = idle;
    m.running_gpus = 16 - idle;
    m.pending_gpus_small = small;
    m.pending_gpus_large = pending - small;
    vc.minutes.push_back(m);
  }
  vc.cleaning.rows = static_cast<int64_t>(rows.size());
  return vc;
}

// Minute by minute (P = pending, I = idle, sums over a, b, c; F = min(P, I,
// P + I - max(P_v + I_v))):
//   0: a 4/0, b 0/2, c 0/6: P 4, I 8, max 6 (c): F = min(4, 8, 6) = 4.
//      All of a's 4 run; lending shared 2 : 6: b lends 1, c lends 3.
//      small: a 4 of 4: Ps 4: Fs = min(4, 8, 4 + 8 - 6) = 4.
//   1: a 0/3, b 5/1, c 2/0: P 7, I 4, max 6 (b): F = min(7, 4, 5) = 4.
//      Every idle GPU is used: a lends 3, b lends 1. Borrowing caps:
//      b min(5, 4 - 1) = 3, c min(2, 4 - 0) = 2; shared 5 : 2 of 4 =
//      2.86 : 1.14, rounded by largest remainder: b 3, c 1.
//      small: b 1, c 2: Ps 3, max(Ps_v + I_v) = 3 (a): Fs = min(3, 4, 4) = 3.
//   2: a 8/2, b 0/0, c 1/0: P 9, I 2, max 10 (a): F = min(9, 2, 1) = 1:
//      c's pending GPU on one of a's idle ones. small: c 1: Fs = 1.
//   3: a 2/3, b 0/0, c 0/0: F = min(2, 3, 0) = 0: a's own GPUs only.
//   4: in a and b only: left out.
// Totals (GPU-minutes): pending 4 + 7 + 9 + 2 = 22; lendable 4 + 4 + 1 = 9;
// idle 8 + 4 + 2 + 3 = 17; small pending 4 + 3 + 1 = 8, lendable 8.
// Borrowed: a 4, b 3, c 1 + 1 = 2 (sum 9); lent: a 3 + 1 = 4, b 1 + 1 = 2,
// c 3 (sum 9). After lending 22 - 9 = 13 pending GPU-minutes remain: mean
// pending GPUs 22 / 4 = 5.5 before, 13 / 4 = 3.25 after, 9 / 22 removed.
std::vector<HeliosVc> TinyMonth() {
  return {Vc("a", {{0, 4, 0, 4}, {1, 0, 3, 0}, {2, 8, 2, 0}, {3, 2, 3, 0}, {4, 1, 1, 0}}),
          Vc("b", {{0, 0, 2, 0}, {1, 5, 1, 1}, {2, 0, 0, 0}, {3, 0, 0, 0}, {4, 0, 0, 0}}),
          Vc("c", {{0, 0, 6, 0}, {1, 2, 0, 2}, {2, 1, 0, 1}, {3, 0, 0, 0}})};
}

TEST(CrossClusterTest, ATinyMonthWorkedOutByHand) {
  auto s = RunCrossClusterStudy(TinyMonth());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->minutes.size(), 4u);
  EXPECT_EQ(s->minutes_dropped_unaligned, 1);
  const int64_t lendable[] = {4, 4, 1, 0};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(s->minutes[i].lendable_gpus, lendable[i]) << i;
  EXPECT_EQ(s->minutes_pending_beside_idle, 3);
  EXPECT_EQ(s->pending_gpu_minutes, 22);
  EXPECT_EQ(s->lendable_gpu_minutes, 9);
  EXPECT_EQ(s->idle_gpu_minutes, 17);
  EXPECT_EQ(s->pending_small_gpu_minutes, 8);
  EXPECT_EQ(s->lendable_small_gpu_minutes, 8);
  ASSERT_EQ(s->vcs.size(), 3u);
  const int64_t borrowed[] = {4, 3, 2}, lent[] = {4, 2, 3}, pending[] = {14, 5, 3},
                idle[] = {8, 3, 6};
  for (size_t v = 0; v < 3; ++v) {
    EXPECT_EQ(s->vcs[v].borrow_gpu_minutes, borrowed[v]) << s->vcs[v].name;
    EXPECT_EQ(s->vcs[v].lend_gpu_minutes, lent[v]) << s->vcs[v].name;
    EXPECT_EQ(s->vcs[v].pending_gpu_minutes, pending[v]) << s->vcs[v].name;
    EXPECT_EQ(s->vcs[v].idle_gpu_minutes, idle[v]) << s->vcs[v].name;
    EXPECT_EQ(s->vcs[v].gpus, 16);
  }

  const nlohmann::ordered_json j = CrossClusterMetricsJson(*s);
  EXPECT_EQ(j["vcs"], nlohmann::json::array({"a", "b", "c"}));
  EXPECT_EQ(j["gpus"], 48);
  EXPECT_EQ(j["minutes"], 4);
  EXPECT_EQ(j["minutes_dropped_unaligned"], 1);
  EXPECT_EQ(j["rows"], 14);
  EXPECT_EQ(j["first_minute"], "2020-05-01 00:00:00");
  EXPECT_EQ(j["last_minute"], "2020-05-01 00:03:00");
  EXPECT_DOUBLE_EQ(j["share_minutes_pending_beside_idle"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["pending_gpu_hours"].get<double>(), 0.367);  // 22 / 60, to 3 decimals
  EXPECT_DOUBLE_EQ(j["lendable_gpu_hours"].get<double>(), 0.15);
  EXPECT_DOUBLE_EQ(j["pending_gpu_hours_after"].get<double>(), 0.217);
  EXPECT_DOUBLE_EQ(j["pending_reduction_share"].get<double>(), 0.409091);
  EXPECT_DOUBLE_EQ(j["mean_pending_gpus_before"].get<double>(), 5.5);
  EXPECT_DOUBLE_EQ(j["mean_pending_gpus_after"].get<double>(), 3.25);
  EXPECT_EQ(j["per_vc"][1]["vc"], "b");
  EXPECT_DOUBLE_EQ(j["per_vc"][1]["borrow_gpu_hours"].get<double>(), 0.05);

  const std::string html = RenderCrossClusterReport(*s);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  size_t charts = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    ++charts;
  }
  EXPECT_EQ(charts, 2u);
  EXPECT_EQ(html, RenderCrossClusterReport(*s));
}

TEST(CrossClusterTest, NothingToAlignIsAnError) {
  EXPECT_EQ(RunCrossClusterStudy({}).status().code(), core::StatusCode::kInvalidArgument);
  auto apart = RunCrossClusterStudy({Vc("a", {{0, 1, 1, 0}}), Vc("b", {{5, 1, 1, 0}})});
  ASSERT_FALSE(apart.ok());
  EXPECT_NE(apart.status().message().find("no minute is present in every virtual cluster"),
            std::string::npos);
  EXPECT_NE(apart.status().message().find("b 2020-05-01 00:05:00 to 2020-05-01 00:05:00"),
            std::string::npos)
      << apart.status().message();
}

}  // namespace
}  // namespace gleaner::sim
