// The Coordinator's parts on their own: the host registry's rules, the
// relays between askers and agents. (The Coordinator's own tests drive
// them together, with a store.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/agent_relays.h"
#include "cluster/host_registry.h"

namespace gleaner::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Log kQuiet = [](const std::string&) {};

core::TimePoint At(int64_t s) { return core::FromUnixMicros(s * 1'000'000); }

std::vector<InventoryGpu> Gpus(const std::string& prefix, int n) {
  std::vector<InventoryGpu> gpus;
  for (int i = 0; i < n; ++i) {
    gpus.push_back({core::GpuUuid(prefix + std::to_string(i)), i, "H100", core::Bytes::GiB(80)});
  }
  return gpus;
}

TEST(HostRegistryTest, AGpuStaysWithTheHostThatReportedItFirst) {
  HostRegistry hosts(0);
  std::vector<store::GpuRecord> records;
  KnownHost& a = hosts.Heard("a", At(0), kQuiet);
  ASSERT_TRUE(hosts.LearnInventory("a", a, Gpus("GPU-a", 2), "", {}, At(0), &records, kQuiet).ok());
  EXPECT_EQ(records.size(), 2u);
  KnownHost& b = hosts.Heard("b", At(0), kQuiet);
  auto stolen = hosts.LearnInventory("b", b, Gpus("GPU-a", 1), "", {}, At(0), &records, kQuiet);
  ASSERT_FALSE(stolen.ok());
  EXPECT_THAT(stolen.status().message(), HasSubstr("gleaner host forget a"));
  ASSERT_NE(hosts.NameOf(core::GpuUuid("GPU-a0")), nullptr);
  EXPECT_EQ(*hosts.NameOf(core::GpuUuid("GPU-a0")), "a");
}

TEST(HostRegistryTest, GpusNewSinceTheFirstJoinWaitForRoot) {
  HostRegistry hosts(0);
  std::vector<store::GpuRecord> records;
  KnownHost& a = hosts.Heard("a", At(0), kQuiet);
  ASSERT_TRUE(hosts.LearnInventory("a", a, Gpus("GPU-a", 1), "", {}, At(0), &records, kQuiet).ok());
  auto grown = hosts.LearnInventory("a", a, Gpus("GPU-a", 2), "", {}, At(1), &records, kQuiet);
  ASSERT_FALSE(grown.ok());
  EXPECT_THAT(grown.status().message(), HasSubstr("gleaner host accept a"));
  ASSERT_EQ(a.unaccepted.size(), 1u);
  EXPECT_EQ(a.unaccepted[0].uuid, core::GpuUuid("GPU-a1"));
}

TEST(HostRegistryTest, RefusesMoreGpusThanAHostMayHave) {
  HostRegistry hosts(4);
  std::vector<store::GpuRecord> records;
  KnownHost& a = hosts.Heard("a", At(0), kQuiet);
  auto many = hosts.LearnInventory("a", a, Gpus("GPU-a", 5), "", {}, At(0), &records, kQuiet);
  ASSERT_FALSE(many.ok());
  EXPECT_THAT(many.status().message(), HasSubstr("--max-gpus-per-host"));
  EXPECT_TRUE(records.empty());
}

TEST(HostRegistryTest, OnlyAChangeOfGpusOrRackPlacesTheNodeAnew) {
  HostRegistry hosts(0);
  std::vector<store::GpuRecord> records;
  KnownHost& a = hosts.Heard("a", At(0), kQuiet);
  EXPECT_TRUE(*hosts.LearnInventory("a", a, Gpus("GPU-a", 2), "", {}, At(0), &records, kQuiet));
  EXPECT_FALSE(*hosts.LearnInventory("a", a, Gpus("GPU-a", 2), "", {}, At(1), &records, kQuiet));
  EXPECT_TRUE(*hosts.LearnInventory("a", a, Gpus("GPU-a", 2), "r1", {}, At(2), &records, kQuiet));
}

TEST(HostRegistryTest, SilentThenLostThenHeardAgain) {
  HostRegistry hosts(0);
  std::vector<std::string> said;
  const Log log = [&](const std::string& m) { said.push_back(m); };
  hosts.Heard("a", At(0), log);
  hosts.JudgeLiveness(At(5), core::Seconds(10), core::Seconds(300), log);
  EXPECT_TRUE(hosts.Find("a")->Reporting());
  hosts.JudgeLiveness(At(11), core::Seconds(10), core::Seconds(300), log);
  EXPECT_TRUE(hosts.Find("a")->silent);
  EXPECT_FALSE(hosts.Find("a")->lost);
  hosts.JudgeLiveness(At(301), core::Seconds(10), core::Seconds(300), log);
  hosts.JudgeLiveness(At(302), core::Seconds(10), core::Seconds(300), log);  // said once
  EXPECT_TRUE(hosts.Find("a")->lost);
  hosts.Heard("a", At(400), log);
  EXPECT_TRUE(hosts.Find("a")->Reporting());
  ASSERT_EQ(said.size(), 3u);
  EXPECT_THAT(said[0], HasSubstr("host a silent"));
  EXPECT_THAT(said[1], HasSubstr("host a lost"));
  EXPECT_THAT(said[2], HasSubstr("host a reports again"));
}

TEST(HostRegistryTest, PlacingWaitsForHostsKnownAtLeadershipOrTheirTimeout) {
  HostRegistry hosts(0);
  hosts.Remember({{core::GpuUuid("GPU-a0"), "a", 0, "H100", core::Bytes::GiB(80), At(0), At(0)},
                  {core::GpuUuid("GPU-b0"), "b", 0, "H100", core::Bytes::GiB(80), At(0), At(0)}});
  std::vector<store::GpuRecord> records;
  KnownHost& a = hosts.Heard("a", At(1), kQuiet);
  ASSERT_TRUE(hosts.LearnInventory("a", a, Gpus("GPU-a", 1), "", {}, At(1), &records, kQuiet).ok());
  EXPECT_FALSE(hosts.Settled(At(5), At(0), core::Seconds(10), kQuiet));  // b not heard
  std::string said;
  EXPECT_TRUE(
      hosts.Settled(At(11), At(0), core::Seconds(10), [&](const std::string& m) { said = m; }));
  EXPECT_THAT(said, HasSubstr("without host(s) b"));
}

TEST(HostRegistryTest, ForgettingAHostFreesItsGpusForAnother) {
  HostRegistry hosts(0);
  std::vector<store::GpuRecord> records;
  KnownHost& a = hosts.Heard("a", At(0), kQuiet);
  ASSERT_TRUE(hosts.LearnInventory("a", a, Gpus("GPU-x", 1), "", {}, At(0), &records, kQuiet).ok());
  EXPECT_THAT(hosts.MayForget("a").message(), HasSubstr("stop its agent first"));
  hosts.JudgeLiveness(At(400), core::Seconds(10), core::Seconds(300), kQuiet);
  ASSERT_TRUE(hosts.MayForget("a").ok());
  ASSERT_TRUE(hosts.Forget("a").has_value());
  KnownHost& b = hosts.Heard("b", At(401), kQuiet);
  EXPECT_TRUE(
      hosts.LearnInventory("b", b, Gpus("GPU-x", 1), "", {}, At(401), &records, kQuiet).ok());
}

TEST(OrderWaitersTest, AWaitEndsAtNewOrdersOrAtTheNextWait) {
  OrderWaiters waiters;
  DeferredCalls calls;
  std::vector<std::pair<int, uint64_t>> woken;
  waiters.Wait(
      "a", 3, 3, [&](uint64_t n) { woken.emplace_back(1, n); }, calls);
  EXPECT_TRUE(calls.Take().empty());  // nothing new: it waits
  waiters.Wait(
      "a", 3, 3, [&](uint64_t n) { woken.emplace_back(2, n); }, calls);
  DeferredCalls::RunAll(calls.Take());  // the first wait ends, with the count as it is
  waiters.Notify("a", 4, calls);
  waiters.Notify("a", 5, calls);  // no one waits any more
  DeferredCalls::RunAll(calls.Take());
  waiters.Wait(
      "a", 5, 2, [&](uint64_t n) { woken.emplace_back(3, n); }, calls);  // past: at once
  DeferredCalls::RunAll(calls.Take());
  EXPECT_THAT(woken, ElementsAre(std::pair(1, uint64_t{3}), std::pair(2, uint64_t{4}),
                                 std::pair(3, uint64_t{5})));
}

TEST(LogRelayTest, PiecesReachTheirAskersAndLateOnesExpire) {
  LogRelay logs;
  DeferredCalls calls;
  std::vector<std::string> answers;
  const auto answer = [&](core::Result<LogChunk> got) {
    answers.push_back(got.ok() ? got->data : got.status().message());
  };
  ASSERT_TRUE(logs.Ask("a", 7, false, 0, answer, At(0)).ok());
  ASSERT_TRUE(logs.Ask("a", 8, true, 0, answer, At(5)).ok());
  AgentReply reply;
  logs.Exchange("a", {}, reply, calls);
  ASSERT_EQ(reply.logs.size(), 2u);
  AgentReply next;
  logs.Exchange("b", {{reply.logs[0].id, "not b's", 7, ""}}, next, calls);  // another host's id
  EXPECT_TRUE(next.logs.empty());
  logs.Exchange("a", {{reply.logs[0].id, "hello", 5, ""}}, next, calls);
  logs.Expire(At(12), calls);  // the second, asked at 5, has 10 s
  DeferredCalls::RunAll(calls.Take());
  logs.Expire(At(16), calls);
  DeferredCalls::RunAll(calls.Take());
  EXPECT_THAT(answers, ElementsAre("hello", HasSubstr("did not send the log within 10 s")));
}

TEST(LogRelayTest, AHostHasAtMostSixteenRequestsOpen) {
  LogRelay logs;
  const auto ignore = [](core::Result<LogChunk>) {};
  for (size_t i = 0; i < LogRelay::kMaxOpenPerHost; ++i) {
    ASSERT_TRUE(logs.Ask("a", 1, false, 0, ignore, At(0)).ok());
  }
  EXPECT_THAT(logs.Ask("a", 1, false, 0, ignore, At(0)).message(), HasSubstr("try again"));
  EXPECT_TRUE(logs.Ask("b", 1, false, 0, ignore, At(0)).ok());
}

TEST(HolderRelayTest, AskingAgainChangesNothing) {
  HolderRelay relay;
  const HolderRequest keep{core::GpuUuid("GPU-1"), observe::HolderAsk::kKeep};
  relay.Ask("a", keep);
  relay.Ask("a", keep);
  EXPECT_THAT(relay.Take("a"), ElementsAre(keep));
  EXPECT_TRUE(relay.Take("a").empty());
}

}  // namespace
}  // namespace gleaner::cluster
