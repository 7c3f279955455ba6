// A dry-run replays the store's own minutes and jobs under two policies:
// a candidate that judges GPUs idle sooner lends more of the same history.
#include "report/policy_dry_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "site_history.h"
#include "store/sqlite_store.h"

namespace gleaner::report {
namespace {

using ::testing::HasSubstr;

using testing::kT0;

const cost::Catalog& Builtin() { return testing::BuiltinCatalog(); }

// Two GPUs of host a for an hour: GPU 0 quiet throughout; GPU 1 computing
// for alice for 30 minutes, then quiet. Three jobs of 10 minutes arrive at
// minute 5.
std::unique_ptr<store::SqliteStore> History() {
  auto store = std::move(store::SqliteStore::Open(":memory:")).value();
  std::vector<store::GpuRecord> gpus;
  for (uint32_t i = 0; i < 2; ++i) {
    store::GpuRecord g;
    g.uuid = core::GpuUuid("GPU-" + std::to_string(i));
    g.host = "a";
    g.index = i;
    g.name = "NVIDIA A100-SXM4-80GB";
    g.first_seen = g.last_seen = kT0;
    gpus.push_back(g);
  }
  EXPECT_TRUE(store->SaveGpus(gpus).ok());
  std::vector<observe::MinuteRollup> minutes;
  for (int m = 0; m < 60; ++m) {
    for (int g = 0; g < 2; ++g) {
      observe::MinuteRollup r;
      r.uuid = core::GpuUuid("GPU-" + std::to_string(g));
      r.minute = kT0 + core::Seconds(60 * m);
      r.samples = 60;
      r.observed = core::Seconds(60);
      const bool busy = g == 1 && m < 30;
      r.utilization_mean_pct = r.utilization_min_pct = r.utilization_max_pct = busy ? 90 : 0;
      if (busy) {
        r.users = {"alice"};
        r.memory_used_max = core::Bytes::GiB(40);
        r.busy = r.observed;
      } else {
        r.idle = r.observed;
      }
      minutes.push_back(r);
    }
  }
  EXPECT_TRUE(store->AddRollups(minutes).ok());
  sched::JobSpec spec;
  spec.command = {"train"};
  spec.project = "vision";
  spec.expected_runtime = core::Seconds(600);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(store->Submit("bob", 1001, spec, kT0 + core::Seconds(300)).ok());
  }
  return store;
}

TEST(PolicyDryRunTest, ACandidateThatJudgesSoonerLendsMoreOfTheSameHistory) {
  auto store = History();
  config::GleanerConfig current;
  current.idle.idle_after = core::Seconds(3000);  // GPU 0 idle only for the last 10 minutes
  config::GleanerConfig candidate;
  candidate.idle.idle_after = core::Seconds(120);
  auto run = RunDryRun(*store, current, candidate, Builtin(), kT0, kT0 + core::Seconds(3600));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->scenario.owner.gpu_count(), 2);
  EXPECT_EQ(run->scenario.minutes, 120);
  ASSERT_EQ(run->scenario.queue.size(), 3u);
  EXPECT_EQ(run->scenario.queue[0].work_s, 600);
  EXPECT_FALSE(run->scenario.synthetic_queue);
  // The same quiet time, lent sooner: more harvested, all three finish.
  EXPECT_GT(run->candidate.harvested_gpu_s, run->current.harvested_gpu_s);
  EXPECT_EQ(run->candidate.idle_gpu_s, run->current.idle_gpu_s);
  int finished = 0;
  for (const auto& j : run->candidate.jobs) finished += j.end_s >= 0 ? 1 : 0;
  EXPECT_EQ(finished, 3);
  run->current_name = "running";
  run->candidate_name = "new.toml";
  const std::string text = DryRunText(*run);
  EXPECT_THAT(text, HasSubstr("dry-run on this site's history: 1h00m, 2 GPU(s), 120 GPU-minutes; "
                              "3 job(s) submitted"));
  EXPECT_THAT(text, HasSubstr("jobs finished"));
  EXPECT_THAT(text, HasSubstr("  vision "));
  EXPECT_EQ(DryRunJson(*run)["candidate"]["jobs_finished"], 3);
  // Money: the GPUs priced as the catalog's A100-80GB; more harvested, more saved.
  ASSERT_TRUE(run->prices.has_value());
  EXPECT_EQ(run->prices->gpu_model, "A100-80GB");
  EXPECT_THAT(text, HasSubstr("money: GPUs priced as A100-80GB, "));
  EXPECT_THAT(text, HasSubstr("net saving, USD"));
  const auto json = DryRunJson(*run);
  EXPECT_GT(json["candidate"]["money"]["net_savings"].get<double>(),
            json["current"]["money"]["net_savings"].get<double>());
  EXPECT_EQ(json["prices"]["currency"], "USD");
}

TEST(PolicyDryRunTest, ATinyHistoryIsRefusedWithWhatToDo) {
  auto store = History();
  auto run = RunDryRun(*store, config::GleanerConfig{}, config::GleanerConfig{}, Builtin(),
                       kT0 + core::Seconds(3540), kT0 + core::Seconds(3600));
  EXPECT_EQ(run.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_THAT(run.status().message(),
              HasSubstr("the store holds 1 minute(s) of history in the span; a dry-run needs at "
                        "least 2: let gleaner up watch longer, or give a longer --since"));
  auto empty = std::move(store::SqliteStore::Open(":memory:")).value();
  EXPECT_EQ(RunDryRun(*empty, config::GleanerConfig{}, config::GleanerConfig{}, Builtin(), kT0,
                      kT0 + core::Seconds(3600))
                .status()
                .code(),
            core::StatusCode::kFailedPrecondition);
}

TEST(PolicyDryRunTest, WithNoJobsInTheSpanASeededStandInIsPlacedUnderBoth) {
  auto store = History();
  auto run = RunDryRun(*store, config::GleanerConfig{}, config::GleanerConfig{}, Builtin(),
                       kT0 + core::Seconds(1200),
                       kT0 + core::Seconds(3600));  // the jobs came at 5 minutes
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_TRUE(run->scenario.synthetic_queue);
  EXPECT_FALSE(run->scenario.queue.empty());
  EXPECT_EQ(run->current.harvested_gpu_s, run->candidate.harvested_gpu_s);  // the same policy
  EXPECT_THAT(DryRunText(*run), HasSubstr("synthetic jobs (none was submitted in the span)"));
}

}  // namespace
}  // namespace gleaner::report
