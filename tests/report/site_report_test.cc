// The periodic report reads what the store recorded: the GPUs' hours and
// their money, what happened to the jobs, and a replay of the span under
// the running policy.
#include "report/site_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "site_history.h"
#include "store/sqlite_store.h"

namespace gleaner::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::kT0;
core::TimePoint At(int64_t s) { return kT0 + core::Seconds(s); }

const cost::Catalog& Builtin() { return testing::BuiltinCatalog(); }

// One A100 of host a for an hour: alice computes for 20 minutes, then
// leaves it quiet; bob's job runs on it, is sent away when alice comes
// back at minute 40, is requeued, runs again and succeeds. A second job
// waits for an approver who denies it. The policy changed once.
std::unique_ptr<store::SqliteStore> Week() {
  auto store = std::move(store::SqliteStore::Open(":memory:")).value();
  store::GpuRecord g;
  g.uuid = core::GpuUuid("GPU-0");
  g.host = "a";
  g.name = "NVIDIA A100-SXM4-80GB";
  g.memory_total = core::Bytes::GiB(80);
  g.first_seen = g.last_seen = kT0;
  EXPECT_TRUE(store->SaveGpus({g}).ok());
  std::vector<observe::MinuteRollup> minutes;
  for (int m = 0; m < 60; ++m) {
    observe::MinuteRollup r;
    r.uuid = g.uuid;
    r.minute = At(60 * m);
    r.samples = 60;
    r.observed = core::Seconds(60);
    const bool owner = m < 20 || m >= 40;
    r.utilization_mean_pct = r.utilization_min_pct = r.utilization_max_pct = owner ? 90 : 0;
    r.state = owner ? observe::GpuState::kBusy : observe::GpuState::kHarvested;
    if (owner) {
      r.users = {"alice"};
      r.busy = r.observed;
    } else {
      r.harvested = r.observed;
    }
    minutes.push_back(r);
  }
  EXPECT_TRUE(store->AddRollups(minutes).ok());

  sched::JobSpec spec;
  spec.command = {"train"};
  spec.project = "vision";
  spec.expected_runtime = core::Seconds(1200);
  const sched::JobId job = store->Submit("bob", 1001, spec, At(1200))->id;
  using S = store::JobState;
  const auto move = [&](S from, S to, int64_t at, std::string reason) {
    store::JobUpdate u;
    u.at = At(at);
    u.reason = std::move(reason);
    if (to == S::kRunning) {
      u.gpus = std::vector<core::GpuUuid>{g.uuid};
      u.started_at = At(at);
    }
    if (to == S::kSucceeded) {
      u.finished_at = At(at);
      u.exit_code = 0;
    }
    ASSERT_TRUE(store->Transition(job, from, to, u).ok()) << reason;
  };
  move(S::kQueued, S::kRunning, 1260, "idle");
  // As the scheduler writes them: the GPU claimed, then why.
  move(S::kRunning, S::kVacating, 2400, g.uuid.str() + ": owner returned: process 7 of alice");
  move(S::kVacating, S::kQueued, 2430, "requeued: its GPU's owner came back");
  move(S::kQueued, S::kRunning, 3000, "idle");
  move(S::kRunning, S::kVacating, 3100,
       g.uuid.str() + ": for job 9 (critical, needs 1 GPU): critical work outranks opportunistic");
  move(S::kVacating, S::kQueued, 3130, "requeued: preempted");
  move(S::kQueued, S::kRunning, 3200, "idle");
  move(S::kRunning, S::kSucceeded, 3300, "exited 0");

  store::NewJob waiting{"carol", 1002, spec, "waiting for approval by dave: critical jobs need it"};
  auto asked = store->SubmitAll({waiting}, At(1500));
  EXPECT_TRUE(asked.ok());
  store::JobUpdate deny;
  deny.actor = "dave";
  deny.event = "denied";
  deny.at = At(1600);
  deny.reason = "denied by dave: not this week";
  EXPECT_TRUE(store->Transition(asked->front().id, S::kPendingApproval, S::kCancelled, deny).ok());
  EXPECT_TRUE(
      store->AddPolicy({0, At(100), "root", "idle sooner", "[idle]\n"}, "policy_applied").ok());
  return store;
}

TEST(SiteReportTest, TheJobsHistoryIsCountedFromTheEvents) {
  auto store = Week();
  auto a = JobActivityFromStore(*store, kT0, At(3600));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->submitted, 2);
  EXPECT_EQ(a->started, 1);
  EXPECT_EQ(a->succeeded, 1);
  EXPECT_EQ(a->owner_returns, 1);
  EXPECT_EQ(a->preempted, 1);
  EXPECT_EQ(a->requeued, 2);
  EXPECT_EQ(a->approvals_asked, 1);
  EXPECT_EQ(a->denied, 1);
  ASSERT_TRUE(a->mean_wait_s.has_value());
  EXPECT_DOUBLE_EQ(*a->mean_wait_s, 60);  // submitted at 20:00, first started at 21:00
  ASSERT_EQ(a->policy_changes.size(), 1u);
  EXPECT_THAT(a->policy_changes[0], HasSubstr("applied by root"));
  // The span narrows it: nothing happened in the first ten minutes but the policy.
  auto early = JobActivityFromStore(*store, kT0, At(600));
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->submitted, 0);
  EXPECT_FALSE(early->mean_wait_s.has_value());
  EXPECT_EQ(early->policy_changes.size(), 1u);  // recorded last, at 100 s
}

// Names and notes come from users and hosts: the page shows them as text.
TEST(SiteReportTest, WhatUsersWroteIsShownAsTextNeverAsMarkup) {
  auto store = Week();
  store::GpuRecord g;
  g.uuid = core::GpuUuid("GPU-1");
  g.host = "<script>alert(1)</script>";
  g.name = "NVIDIA A100-SXM4-80GB";
  g.first_seen = g.last_seen = kT0;
  ASSERT_TRUE(store->SaveGpus({g}).ok());
  ASSERT_TRUE(store
                  ->AddPolicy({0, At(200), "root", "<img src=x onerror=alert(2)>", "[idle]\n"},
                              "policy_applied")
                  .ok());
  config::GleanerConfig policy;
  policy.project_of_user["alice"] = "<b>vision</b>";
  auto report = BuildSiteReport(*store, policy, Builtin(), kT0, At(3600));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const std::string page = RenderSiteReport(*report);
  for (const char* raw : {"<script>alert", "<img src", "<b>vision"}) {
    EXPECT_THAT(page, Not(HasSubstr(raw)));
  }
  EXPECT_THAT(page, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(page, HasSubstr("&lt;img src=x onerror=alert(2)&gt;"));
  EXPECT_THAT(page, HasSubstr("&lt;b&gt;vision&lt;/b&gt;"));
}

TEST(SiteReportTest, ThePageSaysWhatTheGpusDidWhatItCostAndReplaysTheSpan) {
  auto store = Week();
  config::GleanerConfig policy;
  auto report = BuildSiteReport(*store, policy, Builtin(), kT0, At(3600));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_NEAR(report->ledger.report.total.observed_h, 1.0, 1e-9);
  EXPECT_NEAR(report->ledger.report.total.harvested_h, 20.0 / 60, 1e-9);
  ASSERT_TRUE(report->scenario.has_value());
  EXPECT_FALSE(report->runs.empty());
  ASSERT_TRUE(report->prices.has_value());
  const std::string page = RenderSiteReport(*report);
  EXPECT_THAT(page, HasSubstr("<title>gleaner report: a</title>"));
  EXPECT_THAT(page, HasSubstr("What the GPUs did"));
  EXPECT_THAT(page, HasSubstr("<tr><th>harvested by gleaner's jobs</th><td>0.33</td>"));
  EXPECT_THAT(page, HasSubstr("<tr><th>given back to returning owners</th><td>1</td></tr>"));
  EXPECT_THAT(page, HasSubstr("applied by root"));
  EXPECT_THAT(page, HasSubstr("The running policy replayed on this span"));
  EXPECT_THAT(page, HasSubstr("GPUs priced as A100-80GB"));
  EXPECT_THAT(page, HasSubstr("</body></html>"));
  EXPECT_EQ(page, RenderSiteReport(*report));  // the same report, the same bytes
}

TEST(SiteReportTest, ASpanTooShortToReplayStillReportsWhatHappened) {
  auto store = Week();
  auto report = BuildSiteReport(*store, config::GleanerConfig{}, Builtin(), At(3540), At(3600));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_FALSE(report->scenario.has_value());
  const std::string page = RenderSiteReport(*report);
  EXPECT_THAT(page, HasSubstr("Not replayed: the store holds 1 minute(s) of history"));
  EXPECT_THAT(page, Not(HasSubstr("CDF of completion times")));
  EXPECT_THAT(page, HasSubstr("</body></html>"));
}

}  // namespace
}  // namespace gleaner::report
