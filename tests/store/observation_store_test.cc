// ObservationStore on every backend: GPU minutes that merge when a minute
// is stored twice, GPUs, latest verdicts, usage profiles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <barrier>
#include <thread>

#include "store_backend.h"
#include "store_test_data.h"

namespace gleaner::store {
namespace {

using ::testing::HasSubstr;

class ObservationStoreTest : public StoreTest {};

TEST_P(ObservationStoreTest, RollupsRoundTripAndMergeARestartedMinute) {
  ASSERT_TRUE(
      store_->AddRollups({Rollup("GPU-a", 0), Rollup("GPU-a", 1), Rollup("GPU-b", 0)}).ok());
  observe::MinuteRollup second_part = Rollup("GPU-a", 1);
  second_part.samples = 20;
  second_part.utilization_mean_pct = 0.5;
  second_part.utilization_min_pct = 0;
  second_part.memory_used_max.reset();
  second_part.power_mean_w.reset();
  second_part.users = {"carol"};
  second_part.state = observe::GpuState::kIdle;
  ASSERT_TRUE(store_->AddRollups({second_part}).ok());
  auto rows = store_->Rollups(core::GpuUuid("GPU-a"), kT0, kT0 + core::Seconds(3600));
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0], Rollup("GPU-a", 0));
  const observe::MinuteRollup& m = (*rows)[1];
  EXPECT_EQ(m.samples, 80);
  EXPECT_DOUBLE_EQ(m.utilization_mean_pct, (40.5 * 60 + 0.5 * 20) / 80);
  EXPECT_DOUBLE_EQ(m.utilization_min_pct, 0);
  EXPECT_DOUBLE_EQ(m.utilization_max_pct, 99);
  EXPECT_EQ(m.memory_used_max, core::Bytes::GiB(12));
  EXPECT_EQ(m.users, (std::set<std::string>{"alice", "bob", "carol"}));
  EXPECT_EQ(m.state, observe::GpuState::kIdle);
  EXPECT_EQ(m.observed, core::Seconds(120));
  EXPECT_EQ(
      store_->Rollups(core::GpuUuid("GPU-a"), kT0 + core::Seconds(60), kT0 + core::Seconds(61))
          ->size(),
      1u);
}

TEST_P(ObservationStoreTest, PruneDropsOldMinutesOnly) {
  ASSERT_TRUE(
      store_->AddRollups({Rollup("GPU-a", 0), Rollup("GPU-a", 10), Rollup("GPU-a", 20)}).ok());
  auto pruned = store_->PruneRollups(kT0 + core::Seconds(60 * 10));
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 1);
  EXPECT_EQ(store_->Rollups(core::GpuUuid("GPU-a"), kT0, kT0 + core::Seconds(3600))->size(), 2u);
}

TEST_P(ObservationStoreTest, RollupsBetweenSpansEveryGpu) {
  ASSERT_TRUE(store_
                  ->AddRollups({Rollup("GPU-b", 0), Rollup("GPU-a", 1), Rollup("GPU-a", 0),
                                Rollup("GPU-a", 5)})
                  .ok());
  auto rows = store_->RollupsBetween(kT0, kT0 + core::Seconds(60 * 5));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0], Rollup("GPU-a", 0));
  EXPECT_EQ((*rows)[1], Rollup("GPU-a", 1));
  EXPECT_EQ((*rows)[2], Rollup("GPU-b", 0));
}

TEST_P(ObservationStoreTest, GpusKeepWhenTheyWereFirstSeen) {
  GpuRecord g;
  g.uuid = core::GpuUuid("GPU-a");
  g.host = "node1";
  g.index = 3;
  g.name = "NVIDIA H100 80GB HBM3";
  g.memory_total = core::Bytes::GiB(80);
  g.first_seen = g.last_seen = kT0;
  GpuRecord other = g;
  other.uuid = core::GpuUuid("GPU-b");
  other.index = 0;
  other.memory_total.reset();
  ASSERT_TRUE(store_->SaveGpus({g, other}).ok());
  GpuRecord later = g;
  later.index = 1;  // renumbered after a reboot
  later.first_seen = later.last_seen = kT0 + core::Seconds(3600);
  ASSERT_TRUE(store_->SaveGpus({later}).ok());
  auto gpus = store_->Gpus();
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0], other);  // by host, then index
  GpuRecord expected = later;
  expected.first_seen = kT0;
  EXPECT_EQ((*gpus)[1], expected);
}

TEST_P(ObservationStoreTest, AHostsGpusAreForgottenOnlyWhenAsked) {
  GpuRecord g;
  g.uuid = core::GpuUuid("GPU-a");
  g.host = "node1";
  g.first_seen = g.last_seen = kT0;
  GpuRecord other = g;
  other.uuid = core::GpuUuid("GPU-b");
  other.host = "node2";
  ASSERT_TRUE(store_->SaveGpus({g, other}).ok());
  EXPECT_EQ(store_->ForgetGpus("node9").value(), 0);
  EXPECT_EQ(store_->ForgetGpus("node1").value(), 1);
  auto gpus = store_->Gpus();
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].host, "node2");
}

TEST_P(ObservationStoreTest, LatestVerdictsAreReplaced) {
  observe::Verdict v;
  v.uuid = core::GpuUuid("GPU-a");
  v.state = observe::GpuState::kIdle;
  v.since = kT0;
  v.at = kT0 + core::Seconds(5);
  v.evidence.reason = "quiet, \"quoted\"";
  v.evidence.utilization_pct = 0;
  v.evidence.confidence = 0.8;
  v.evidence.similar_pauses = 12;
  v.evidence.process_memory = core::Bytes::MiB(3);
  v.evidence.quiet_for = core::Milliseconds(301'500);
  ASSERT_TRUE(store_->SaveVerdicts({v}).ok());
  v.state = observe::GpuState::kBusy;
  ASSERT_TRUE(store_->SaveVerdicts({v}).ok());
  auto latest = store_->LatestVerdicts();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_EQ(latest->size(), 1u);
  EXPECT_EQ((*latest)[0], v);
}

TEST_P(ObservationStoreTest, PauseModelsAreKeptPerHostAndReplaced) {
  auto none = store_->PauseModel("node-a");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());
  observe::QuietSpellModel a;
  const observe::QuietSpellModel::Features quiet{core::Seconds(900), {}, true};
  for (int i = 0; i < 5; ++i) a.Learn(quiet, i != 0);
  ASSERT_TRUE(store_->SavePauseModel("node-a", a).ok());
  ASSERT_TRUE(store_->SavePauseModel("node-b", observe::QuietSpellModel()).ok());
  a.Learn(quiet, true);
  ASSERT_TRUE(store_->SavePauseModel("node-a", a).ok());
  auto got = store_->PauseModel("node-a");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ((*got)->cells(), a.cells());
  EXPECT_EQ((*got)->Predict(quiet).similar, 6);
  EXPECT_EQ((*got)->Predict(quiet).stayed_quiet, 5);
  auto b = store_->PauseModel("node-b");
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->Predict(quiet).similar, 0);
}

TEST_P(ObservationStoreTest, ProfilesAccumulate) {
  observe::UsageProfiles delta(std::map<std::string, std::string>{{"alice", "vision"}});
  delta.Add(Rollup("GPU-a", 0));
  ASSERT_TRUE(store_->AddToProfiles(delta).ok());
  ASSERT_TRUE(store_->AddToProfiles(delta).ok());
  const int hour = observe::HourOfWeek(kT0);
  auto gpus = store_->Profiles("gpu");
  ASSERT_TRUE(gpus.ok());
  EXPECT_DOUBLE_EQ(gpus->at("GPU-a").busy_s[static_cast<size_t>(hour)], 90);
  EXPECT_DOUBLE_EQ(gpus->at("GPU-a").observed_s[static_cast<size_t>(hour)], 120);
  EXPECT_DOUBLE_EQ(*gpus->at("GPU-a").Occupancy(hour), 0.75);
  EXPECT_FALSE(gpus->at("GPU-a").Occupancy((hour + 1) % 168).has_value());
  EXPECT_EQ(store_->Profiles("user")->size(), 3u);  // owners alice and bob, and carol's job
  // alice's process was on the GPU both minutes: all 120 s of GPU-time.
  EXPECT_DOUBLE_EQ(store_->Profiles("project")->at("vision").busy_s[static_cast<size_t>(hour)],
                   120);
  EXPECT_THAT(store_->Profiles("team").status().message(), HasSubstr("unknown profile kind"));
}

// An agent's report sent again after its answer was lost (or sent on to a
// new leader) adds its minutes once: the rows and the profiles count the
// first sending only; another run's part of the same minute still merges.
TEST_P(ObservationStoreTest, AnAgentRunsMinutesAreAddedOnce) {
  const std::map<std::string, std::string> projects{{"alice", "vision"}};
  const std::vector<observe::MinuteRollup> sent{Rollup("GPU-a", 0), Rollup("GPU-a", 1)};
  EXPECT_EQ(*store_->AddAgentMinutes({{"0123abcd", sent}}, projects), 2);
  EXPECT_EQ(*store_->AddAgentMinutes({{"0123abcd", sent}}, projects), 0);
  EXPECT_EQ(
      *store_->AddAgentMinutes({{"0123abcd", {Rollup("GPU-a", 1), Rollup("GPU-a", 2)}}}, projects),
      1);
  auto rows = store_->Rollups(core::GpuUuid("GPU-a"), kT0, kT0 + core::Seconds(3600));
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1], Rollup("GPU-a", 1));
  const size_t hour = static_cast<size_t>(observe::HourOfWeek(kT0));
  EXPECT_DOUBLE_EQ(store_->Profiles("gpu")->at("GPU-a").observed_s[hour], 3 * 60.0);
  EXPECT_DOUBLE_EQ(store_->Profiles("project")->at("vision").observed_s[hour], 3 * 60.0);
  // The agent restarted within minute 2: its new run's part is merged.
  EXPECT_EQ(*store_->AddAgentMinutes({{"99ff", {Rollup("GPU-a", 2)}}}, projects), 1);
  EXPECT_EQ(
      store_->Rollups(core::GpuUuid("GPU-a"), kT0 + core::Seconds(120), kT0 + core::Seconds(121))
          ->front()
          .samples,
      2 * Rollup("GPU-a", 2).samples);
  // Without a run (an older agent), as sent: merged each time.
  EXPECT_EQ(*store_->AddAgentMinutes({{"", {Rollup("GPU-b", 0)}}}, projects), 1);
  EXPECT_EQ(*store_->AddAgentMinutes({{"", {Rollup("GPU-b", 0)}}}, projects), 1);
  // Pruned minutes take their parts along.
  ASSERT_TRUE(store_->PruneRollups(kT0 + core::Seconds(3600)).ok());
  EXPECT_EQ(*store_->AddAgentMinutes({{"0123abcd", sent}}, projects), 2);
  // One batch of several agents' reports, one of them twice (sent again
  // while the first still waited): each part once, the two runs' merged.
  EXPECT_EQ(*store_->AddAgentMinutes({{"aa", {Rollup("GPU-c", 0)}},
                                      {"bb", {Rollup("GPU-c", 0)}},
                                      {"aa", {Rollup("GPU-c", 0)}}},
                                     projects),
            2);
  EXPECT_EQ(store_->Rollups(core::GpuUuid("GPU-c"), kT0, kT0 + core::Seconds(60))->front(),
            observe::MergeRollups(Rollup("GPU-c", 0), Rollup("GPU-c", 0)));
}

// Two parts of one minute in one call (a batch written after a restart)
// merge like parts written apart.
TEST_P(ObservationStoreTest, AMinuteTwiceInOneCallMerges) {
  observe::MinuteRollup second_part = Rollup("GPU-a", 0);
  second_part.samples = 20;
  second_part.pids = {99};
  ASSERT_TRUE(store_->AddRollups({Rollup("GPU-a", 0), second_part}).ok());
  auto rows = store_->RollupsBetween(kT0, kT0 + core::Seconds(60));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0], observe::MergeRollups(Rollup("GPU-a", 0), second_part));
  EXPECT_EQ((*rows)[0].samples, 80);
  EXPECT_EQ((*rows)[0].pids, (std::set<uint32_t>{7, 42, 99}));
}

TEST_P(ObservationStoreTest, HostProfileIsTheWholeHostsTime) {
  observe::UsageProfiles delta(std::map<std::string, std::string>{});
  delta.Add(Rollup("GPU-a", 0));
  delta.Add(Rollup("GPU-b", 0));
  ASSERT_TRUE(store_->AddToProfiles(delta).ok());
  const auto hour = static_cast<size_t>(observe::HourOfWeek(kT0));
  auto host = store_->Profiles("host");
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  ASSERT_EQ(host->size(), 1u);
  EXPECT_DOUBLE_EQ(host->at("all").observed_s[hour], 120);
  // A user's share is measured against the host's time.
  EXPECT_DOUBLE_EQ(store_->Profiles("user")->at("alice").observed_s[hour], 120);
}

// Writers on connections of their own, on the backends whose store more
// than one connection shares.
class ObservationStoreConnectionsTest : public StoreTest {};

// Two writers store the two parts of the same minutes at once: every minute
// ends up merged, none replaced. Both the first store of a minute (two
// inserts) and later ones (two merges) race.
TEST_P(ObservationStoreConnectionsTest, WritersOfTheSameMinuteMergeTheirParts) {
  constexpr int kMinutes = 40;
  std::vector<std::unique_ptr<Store>> writers;
  for (int i = 0; i < 2; ++i) {
    auto opened = GetParam()->Open(where_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    writers.push_back(std::move(opened).value());
  }
  std::vector<std::string> errors(2);
  // Both write each minute at the same moment.
  std::barrier together(2);
  std::vector<std::thread> threads;
  for (size_t w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int m = 0; m < kMinutes; ++m) {
        for (int round = 0; round < 2; ++round) {  // the minute's first store, then a merge
          together.arrive_and_wait();
          observe::MinuteRollup part = Rollup("GPU-a", m);
          part.samples = w == 0 ? 60 : 20;
          part.pids = {static_cast<uint32_t>(100 + 10 * round + static_cast<int>(w))};
          if (auto s = writers[w]->AddRollups({part}); !s.ok()) errors[w] = s.ToString();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  auto rows = writers[0]->RollupsBetween(kT0, kT0 + core::Seconds(60 * kMinutes));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), static_cast<size_t>(kMinutes));
  for (const observe::MinuteRollup& r : *rows) {
    EXPECT_EQ(r.samples, 160) << "minute " << core::ToUnixMicros(r.minute);
    EXPECT_EQ(r.pids, (std::set<uint32_t>{100, 101, 110, 111}));
  }
}

GLEANER_STORE_CONFORMANCE(ObservationStoreTest);
GLEANER_SHARED_STORE_CONFORMANCE(ObservationStoreConnectionsTest);

}  // namespace
}  // namespace gleaner::store
