// The replay loop and its policies on tiny traces whose outcomes are worked
// out by hand in the comments, plus determinism and the config errors.
#include "sim/replay.h"

#include <gtest/gtest.h>

#include "sim/node_pool.h"
#include "sim/replay_metrics.h"
#include "sim/replay_report.h"

namespace gleaner::sim {
namespace {

struct Expected {
  int64_t start_s;
  int64_t end_s;
};

ReplayResult Replay(const std::vector<TraceJob>& jobs, int gpus, const std::string& policy) {
  ReplayConfig c;
  c.gpus = gpus;
  c.policy = policy;
  auto r = RunReplay(jobs, c);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ReplayResult{};
}

void ExpectOutcomes(const ReplayResult& r, const std::vector<Expected>& want) {
  ASSERT_EQ(r.outcomes.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.outcomes[i].start_s, want[i].start_s) << "job " << i;
    EXPECT_EQ(r.outcomes[i].end_s, want[i].end_s) << "job " << i;
  }
}

// One node of 8 GPUs. Job 0 takes 6; job 1 (4 GPUs) cannot start until it
// ends; job 2 (2 GPUs) would fit beside job 0 at once.
const std::vector<TraceJob> kBlocked = {
    {0, 100, 6},
    {1, 50, 4},
    {2, 10, 2},
};

TEST(ReplayTest, FifoHeadBlocksTheRest) {
  // Job 1 heads the queue from t=1 to t=100, so job 2 waits behind it even
  // though 2 GPUs are free; at 100 both start (4 + 2 of 8).
  const ReplayResult r = Replay(kBlocked, 8, "fifo");
  ExpectOutcomes(r, {{0, 100}, {100, 150}, {100, 110}});
  const ReplayMetrics m = ComputeReplayMetrics(kBlocked, r, 8);
  // JCT 100, 149, 108; queueing 0, 99, 98.
  EXPECT_DOUBLE_EQ(m.jct.mean_s, (100 + 149 + 108) / 3.0);
  EXPECT_DOUBLE_EQ(m.jct.median_s, 108);
  EXPECT_DOUBLE_EQ(m.jct.p99_s, 149);
  EXPECT_DOUBLE_EQ(m.queue.mean_s, (0 + 99 + 98) / 3.0);
  EXPECT_EQ(m.makespan_s, 150);
  // GPU-seconds 600 + 200 + 20 over 8 GPUs x 150 s.
  EXPECT_DOUBLE_EQ(m.utilization, 820.0 / 1200.0);
  EXPECT_EQ(m.peak_busy_gpus, 6);
  EXPECT_EQ(m.peak_queued_jobs, 2);
}

TEST(ReplayTest, ShortestFirstPutsTheShortJobAtTheHead) {
  // At t=2 the queue is job 2 (10 s), then job 1 (50 s): job 2 fits and
  // starts; job 1 still waits for job 0.
  ExpectOutcomes(Replay(kBlocked, 8, "sjf"), {{0, 100}, {100, 150}, {2, 12}});
}

TEST(ReplayTest, GleanerSchedulerLetsAFittingJobPassABlockedOne) {
  // The Scheduler's pass is greedy: job 2 starts at once beside job 0.
  ExpectOutcomes(Replay(kBlocked, 8, "gleaner"), {{0, 100}, {100, 150}, {2, 12}});
}

// Two nodes of 8. Jobs 0 (3 GPUs) and 1 (5 GPUs) fill node 0 by best fit
// (job 1 takes the node with exactly 5 free). Job 2 needs both nodes whole.
const std::vector<TraceJob> kGang = {
    {0, 100, 3},
    {0, 40, 5},
    {1, 10, 16},
    {2, 5, 1},
};

TEST(ReplayTest, FifoGangWaitsForWholeNodesAndBlocksTheQueue) {
  // Job 2 starts when job 0 leaves node 0 at 100; job 3 waits behind it
  // and starts when it ends at 110.
  const ReplayResult r = Replay(kGang, 16, "fifo");
  ExpectOutcomes(r, {{0, 100}, {0, 40}, {100, 110}, {110, 115}});
  const ReplayMetrics m = ComputeReplayMetrics(kGang, r, 16);
  // JCT 100, 40, 109, 113: median of an even count is the mean of the middle two.
  EXPECT_DOUBLE_EQ(m.jct.median_s, (100 + 109) / 2.0);
  EXPECT_DOUBLE_EQ(m.queue.mean_s, (0 + 0 + 99 + 108) / 4.0);
}

TEST(ReplayTest, ShortestFirstRunsTheOneGpuJobOnTheFreeNode) {
  // At t=2 job 3 (5 s) heads the queue and takes node 1 by best fit (node 0
  // has none free); job 2 still needs node 0.
  ExpectOutcomes(Replay(kGang, 16, "sjf"), {{0, 100}, {0, 40}, {100, 110}, {2, 7}});
}

TEST(ReplayTest, GleanerStartsAGangThroughTheSchedulerAndKeepsItsNodes) {
  // The Scheduler packs jobs 0 and 1 on node 0; the gang (2 nodes x 8)
  // cannot start at t=1 and is kept node 1, wholly free, while node 0
  // drains. Job 3 takes what job 1 frees on node 0 at 40; at 100 node 0 is
  // empty and the gang starts.
  const ReplayResult r = Replay(kGang, 16, "gleaner");
  ExpectOutcomes(r, {{0, 100}, {0, 40}, {100, 110}, {40, 45}});
  EXPECT_EQ(r.gangs_started, 1);
}

// One node of 8 GPUs. Job 0 (low priority) takes 6, leaving 2 free; job 1
// (low, 4 GPUs) arrives first, job 2 (high, 8 GPUs) later, then job 3 (low,
// 2 GPUs), which would fit in the 2 free GPUs at once.
TraceJob WithPriority(TraceJob j, int priority) {
  j.priority = priority;
  return j;
}
const std::vector<TraceJob> kPriorities = {
    WithPriority({0, 100, 6}, 0),
    WithPriority({1, 50, 4}, 0),
    WithPriority({2, 10, 8}, 3),
    WithPriority({3, 20, 2}, 0),
};

TEST(ReplayTest, PriorityPutsALaterHighPriorityJobFirst) {
  // Queue order: job 2 (priority 3), then jobs 1 and 3 (priority 0) by
  // arrival. At t=3 job 3 would fit in the 2 free GPUs but waits behind the
  // head, job 2, which needs all 8: head-of-line blocking, as in fifo. At
  // t=100 job 0 leaves and job 2 takes the node (100-110); at 110 job 1 (4)
  // and job 3 (2) start together: 4 + 2 <= 8.
  ExpectOutcomes(Replay(kPriorities, 8, "priority"),
                 {{0, 100}, {110, 160}, {100, 110}, {110, 130}});
  // fifo, for contrast: job 1 starts at 100 (4 of 8), job 2 waits for the
  // whole node until 150, and job 3 behind it until 160.
  ExpectOutcomes(Replay(kPriorities, 8, "fifo"), {{0, 100}, {100, 150}, {150, 160}, {160, 180}});
}

TEST(ReplayTest, PriorityIsFifoAmongEquals) {
  // With every priority equal, the order is arrival then trace order.
  const std::vector<TraceJob> jobs = {WithPriority({0, 30, 8}, 2), WithPriority({0, 20, 8}, 2),
                                      WithPriority({1, 10, 8}, 2)};
  ExpectOutcomes(Replay(jobs, 8, "priority"), {{0, 30}, {30, 50}, {50, 60}});
}

TEST(ReplayTest, GleanerPassesTracePriorityToTheScheduler) {
  // The greedy pass starts job 3 at once in the 2 free GPUs (3-23). At 100
  // the Scheduler offers the node to job 2 first: its numeric priority
  // (3 x 300 = 900) outweighs job 1's one second more of age. Without it
  // job 1 would start at 100 and job 2 wait until 150.
  ExpectOutcomes(Replay(kPriorities, 8, "gleaner"), {{0, 100}, {110, 160}, {100, 110}, {3, 23}});
}

TEST(ReplayTest, JobsEndBeforeArrivalsAtTheSameInstant) {
  // Job 1 arrives exactly when job 0 ends and starts at once.
  ExpectOutcomes(Replay({{0, 10, 8}, {10, 5, 8}}, 8, "fifo"), {{0, 10}, {10, 15}});
}

TEST(ReplayTest, ArrivalsAtOneInstantKeepTraceOrder) {
  // Three 8-GPU jobs at t=0 on one node run in trace order under fifo.
  ExpectOutcomes(Replay({{0, 30, 8}, {0, 20, 8}, {0, 10, 8}}, 8, "fifo"),
                 {{0, 30}, {30, 50}, {50, 60}});
  // sjf orders them by duration.
  ExpectOutcomes(Replay({{0, 30, 8}, {0, 20, 8}, {0, 10, 8}}, 8, "sjf"),
                 {{30, 60}, {10, 30}, {0, 10}});
}

std::vector<TraceJob> Pseudorandom(int n) {
  std::vector<TraceJob> jobs;
  uint64_t x = 12345;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  const int sizes[] = {1, 1, 1, 2, 4, 8, 16};
  int64_t t = 0;
  for (int i = 0; i < n; ++i) {
    t += static_cast<int64_t>(next() % 50);
    jobs.push_back({t, 1 + static_cast<int64_t>(next() % 2000), sizes[next() % 7],
                    static_cast<int>(next() % 4)});
  }
  return jobs;
}

TEST(ReplayTest, IdenticalRunsGiveIdenticalMetricsAndReports) {
  const std::vector<TraceJob> jobs = Pseudorandom(2000);
  for (const char* policy : {"fifo", "sjf", "priority", "gleaner"}) {
    const ReplayResult a = Replay(jobs, 64, policy);
    const ReplayResult b = Replay(jobs, 64, policy);
    ReplayIdentity id{"t.csv", policy, 64, 8, 7, 0, a.gangs_started};
    const ReplayMetrics ma = ComputeReplayMetrics(jobs, a, 64);
    const ReplayMetrics mb = ComputeReplayMetrics(jobs, b, 64);
    EXPECT_EQ(ReplayMetricsJson(id, ma).dump(), ReplayMetricsJson(id, mb).dump()) << policy;
    EXPECT_EQ(RenderReplayReport(jobs, a, id, ma), RenderReplayReport(jobs, b, id, mb)) << policy;
    // Every job ran, for its own duration, no earlier than it arrived.
    for (size_t i = 0; i < jobs.size(); ++i) {
      EXPECT_GE(a.outcomes[i].start_s, jobs[i].submit_s);
      EXPECT_EQ(a.outcomes[i].end_s - a.outcomes[i].start_s, jobs[i].duration_s);
    }
    EXPECT_GT(ma.utilization, 0);
    EXPECT_LE(ma.utilization, 1);
  }
}

TEST(ReplayTest, NeverMoreGpusBusyThanTheCluster) {
  const std::vector<TraceJob> jobs = Pseudorandom(2000);
  for (const char* policy : {"fifo", "sjf", "priority", "gleaner"}) {
    for (const ReplaySample& s : Replay(jobs, 64, policy).timeline) {
      ASSERT_LE(s.busy_gpus, 64) << policy << " at " << s.t_s;
    }
  }
}

TEST(ReplayTest, ImpossibleConfigsSayWhichFlagToChange) {
  ReplayConfig c;
  c.gpus = 12;
  EXPECT_NE(RunReplay({{0, 1, 1}}, c).status().message().find("multiple of --gpus-per-node"),
            std::string::npos);
  c.gpus = 16;
  EXPECT_NE(RunReplay({{0, 1, 20}}, c).status().message().find("--gpus of at least 24"),
            std::string::npos);
  c.policy = "lifo";
  EXPECT_NE(RunReplay({{0, 1, 1}}, c).status().message().find("expected one of fifo"),
            std::string::npos);
}

TEST(NodePoolTest, BestFitTakesTheFittingNodeWithFewestFree) {
  NodePool pool(3, 8);
  auto a = pool.Take(5);  // node 0 -> 3 free
  auto b = pool.Take(2);  // node 0 (3 free) is the best fit -> 1 free
  auto c = pool.Take(2);  // node 0 has 1: node 1 -> 6 free
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->parts[0].first, 0);
  EXPECT_EQ(b->parts[0].first, 0);
  EXPECT_EQ(c->parts[0].first, 1);
  EXPECT_FALSE(pool.Take(16));  // only node 2 is wholly free
  auto d = pool.Take(8);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->parts[0].first, 2);
  pool.Give(*c);
  auto e = pool.Take(9);  // needs two whole nodes; only node 1 is
  EXPECT_FALSE(e);
  pool.Give(*d);
  e = pool.Take(9);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->parts.size(), 2u);
  EXPECT_EQ(pool.free_gpus(), 24 - 5 - 2 - 16);
}

// Two nodes of two models: "cheap" costs 1.00 an hour at speed 0.5 (2.00
// per A100-hour of work); "dear" 3.00 at 2 (1.50), so dear is the cheaper
// useful hour. The cluster's mean speed is (2 x 0.5 + 2 x 2) / 4 = 1.25.
ReplayConfig TwoModels(bool cost_aware) {
  ReplayConfig c;
  c.policy = "gleaner";
  c.nodes = {{"cheap", 2}, {"dear", 2}};
  c.model_price = [](const std::string& model, core::Bytes) -> std::optional<sched::ModelPrice> {
    if (model == "cheap") return sched::ModelPrice{"cheap", 1.0, 0.5};
    if (model == "dear") return sched::ModelPrice{"dear", 3.0, 2.0};
    return std::nullopt;
  };
  c.cost_aware = cost_aware;
  return c;
}

TEST(ReplayTest, SeveralModelsRunAtTheirSpeedAndTheirGpuHoursArePriced) {
  // One job of 1 GPU recorded for 3600 s: 1.25 A100-hours of work.
  const std::vector<TraceJob> jobs = {{0, 3600, 1}};
  auto on = RunReplay(jobs, TwoModels(true));
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  // On dear: 3600 x 1.25 / 2 = 2250 s, 0.625 GPU-hours at 3.00.
  ExpectOutcomes(*on, {{0, 2250}});
  ASSERT_TRUE(on->cost);
  EXPECT_DOUBLE_EQ(on->cost->gpu_hour_cost, 0.625 * 3.0);
  EXPECT_DOUBLE_EQ(on->cost->work_a100_hours, 1.25);
  EXPECT_DOUBLE_EQ(on->cost->gpu_hours_by_model.at("dear"), 0.625);
  // By fit alone both nodes are alike (2 free of 2): the lower index,
  // cheap, where it runs 3600 x 1.25 / 0.5 = 9000 s: 2.5 GPU-hours at 1.00.
  auto off = RunReplay(jobs, TwoModels(false));
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  ExpectOutcomes(*off, {{0, 9000}});
  EXPECT_DOUBLE_EQ(off->cost->gpu_hour_cost, 2.5);
  EXPECT_DOUBLE_EQ(off->cost->work_a100_hours, 1.25);
  const ReplayMetrics m = ComputeReplayMetrics(jobs, *off, 4);
  EXPECT_EQ(m.gpu_seconds, 9000);  // what it ran, not what was recorded
  EXPECT_DOUBLE_EQ(m.cost->gpu_hour_cost, 2.5);
}

TEST(ReplayTest, AJobOnlyAModelOfTheClusterCanRunIsPlacedThere) {
  std::vector<TraceJob> jobs = {{0, 3600, 1}};
  jobs[0].gpu_models = {"cheap"};
  auto r = RunReplay(jobs, TwoModels(true));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectOutcomes(*r, {{0, 9000}});
  jobs[0].gpu_models = {"other"};
  EXPECT_EQ(RunReplay(jobs, TwoModels(true)).status().message(),
            "job 1 of the trace asks for 1 GPUs of model other on one node, and no node has them");
  ReplayConfig fifo = TwoModels(true);
  fifo.policy = "fifo";
  jobs[0].gpu_models.clear();
  EXPECT_NE(RunReplay(jobs, fifo).status().message().find("policy gleaner only"),
            std::string::npos);
}

}  // namespace
}  // namespace gleaner::sim
