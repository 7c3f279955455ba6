#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/agent_credentials.h"
#include "cluster/agent_protocol.h"
#include "core/sha256.h"

namespace gleaner::cluster {
namespace {

using ::testing::HasSubstr;

AgentReport FullReport() {
  AgentReport r;
  r.inventory = {{core::GpuUuid("GPU-1"), 0, "NVIDIA H100 80GB HBM3", core::Bytes::GiB(80), 0},
                 {core::GpuUuid("GPU-2"), 1, "NVIDIA H100 80GB HBM3", core::Bytes::GiB(80), 0}};
  r.gpus = {{observe::GpuState::kIdle, true, true, 0.0, 512, 71.5, 31.0, 0, 7680},
            {observe::GpuState::kHeldIdle, true, false, 0.0, 41000, 80.5, 33.0, 29696}};
  r.reasons = {{0, "no processes; quiet for 12m"}};
  GpuDetail held;
  held.processes_known = true;
  held.processes = {{4242, "alice", "python notebook.py", core::Bytes::GiB(40), false, 0.0, {}}};
  held.verdict.uuid = core::GpuUuid("GPU-2");
  held.verdict.state = observe::GpuState::kHeldIdle;
  held.verdict.since = held.verdict.at = core::FromUnixMicros(1'800'000'000'000'000);
  held.verdict.evidence.reason = "alice's process holds 40 GiB at 0%";
  held.verdict.evidence.window = core::Seconds(600);
  held.verdict.evidence.quiet_for = core::Seconds(600);
  held.verdict.evidence.processes = 1;
  held.verdict.evidence.beside_holder = observe::BesideHolder{core::Bytes::GiB(29),
                                                              core::Bytes::GiB(40),
                                                              core::Bytes::GiB(43),
                                                              core::Seconds(86400),
                                                              core::Bytes::GiB(8),
                                                              {},
                                                              {},
                                                              "29.0 GiB to lend beside the holder"};
  held.verdict.evidence.parking =
      observe::HolderParking{observe::HolderParking::Phase::kNotice,
                             4242,
                             "alice",
                             core::Bytes::GiB(40),
                             core::FromUnixMicros(1'800'000'600'000'000),
                             "asked to unpark",
                             "it needs 40.0 GiB on the GPU, which has 2.0 GiB free"};
  GpuDetail unreadable;
  unreadable.verdict = held.verdict;
  r.details = {{1, held}, {0, unreadable}};
  r.rack = "rack-7.row-b";
  r.host = {64'000, core::Bytes::GiB(512)};
  r.run = "0f1e2d3c4b5a6978";
  r.running = {{7, 2}};
  JobEvent started;
  started.seq = 4;
  started.of = {7, 2};
  started.kind = JobEvent::Kind::kStarted;
  started.at = core::FromUnixMicros(1'800'000'000'000'000);
  started.pid = 4242;
  started.process_started_at = core::FromUnixMicros(1'799'999'999'000'000);
  JobEvent exited;
  exited.seq = 5;
  exited.of = {6, 1};
  exited.kind = JobEvent::Kind::kExited;
  exited.at = started.at;
  exited.signal = 9;
  exited.vacated = true;
  exited.reason = "owner returned";
  r.events = {started, exited};
  observe::MinuteRollup m;
  m.uuid = core::GpuUuid("GPU-1");
  m.minute = core::FromUnixMicros(1'800'000'000'000'000 - 60'000'000);
  m.samples = 60;
  m.utilization_mean_pct = 1.5;
  m.utilization_max_pct = 3;
  m.memory_used_max = core::Bytes::MiB(512);
  m.power_mean_w = 70;
  m.pids = {1, 2};
  m.users = {"alice"};
  m.job_users = {"bob"};
  m.state = observe::GpuState::kIdle;
  m.observed = m.idle = core::Seconds(60);
  r.minutes = {m};
  r.logs = {{3, "epoch 1 loss 0.42\n", 4096, ""}, {4, "", 0, "this job's log is not a plain file"}};
  return r;
}

TEST(AgentProtocolTest, ReportsSurviveTheirJson) {
  const AgentReport r = FullReport();
  auto back = ReportFromJson(nlohmann::json::parse(ReportToJson(r).dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
}

// Agents from before the protocol had a version sent none: they speak 1.
TEST(AgentProtocolTest, AReportCarriesItsProtocolVersion) {
  EXPECT_EQ(ReportToJson(AgentReport{})["protocol"], kProtocolVersion);
  auto old = ReportFromJson(nlohmann::json::parse(R"({"gpus": [], "running": []})"));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->protocol, 1);
}

TEST(AgentProtocolTest, AOneHzReportOfEightGpusIsSmall) {
  AgentReport r;
  for (int i = 0; i < 8; ++i) {
    r.gpus.push_back({observe::GpuState::kBusy, false, false, 99.0, 79000, 650.5, 71.0});
  }
  r.running = {{1, 1}, {2, 1}};
  // What goes over the wire each second between the events and minutes.
  EXPECT_LT(ReportToJson(r).dump().size(), 400u) << ReportToJson(r).dump();
}

TEST(AgentProtocolTest, RepliesSurviveTheirJson) {
  AgentReply r;
  r.acked = 5;
  r.send_inventory = true;
  r.assigned = {{7, 2}, {9, 1}};
  JobToStart s;
  s.of = {9, 1};
  s.user = "alice";
  s.spec.command = {"python", "train.py"};
  s.spec.working_dir = "/home/alice";
  s.gpus = {core::GpuUuid("GPU-2")};
  s.array_id = 8;
  s.array_index = 1;
  JobToStart member = s;
  member.of = {10, 1};
  member.array_id.reset();
  member.array_index = 0;
  member.spec.nodes = 2;
  member.gang = GangRole{1, {"gpu-01", "gpu-02.example.org"}, 1, GangPort(10)};
  r.start = {s, member};
  r.preempt = {{{7, 2}, "room for a critical job"}};
  r.cancel = {{{8, 1}, "cancelled by alice"}};
  r.lease = core::Seconds(300);
  r.orders = 12;
  r.logs = {{3, 7, false, 4078}, {4, 8, true, 0}};
  r.holders = {{core::GpuUuid("GPU-2"), observe::HolderAsk::kKeep},
               {core::GpuUuid("GPU-1"), observe::HolderAsk::kUnpark},
               {core::GpuUuid("GPU-3"), observe::HolderAsk::kKill}};
  auto back = ReplyFromJson(nlohmann::json::parse(ReplyToJson(r).dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
}

// A gang's hosts land in a hostfile and its rank in the environment: a
// reply that would put a line break, a shell word or a rank out of range
// there is refused whole.
TEST(AgentProtocolTest, AGangRoleThatIsNotPlainIsRefused) {
  const auto reply_with = [](const std::string& gang) {
    return ReplyFromJson(nlohmann::json::parse(
        R"({"acked": 0, "lease_s": 60, "assigned": [[1, 1]], "start": [{"job": [1, 1],
            "user": "alice", "spec": {"command": ["true"], "nodes": 2}, "gpus": ["GPU-1"],
            "gang": )" +
        gang + "}]}"));
  };
  EXPECT_TRUE(
      reply_with(R"({"rank": 1, "hosts": ["a", "b"], "gpus_per_node": 8, "port": 29501})").ok());
  for (const char* bad : {
           R"({"rank": 1, "hosts": ["a", "b\nc slots=99"], "gpus_per_node": 8, "port": 1})",
           R"j({"rank": 1, "hosts": ["a", "$(reboot)"], "gpus_per_node": 8, "port": 1})j",
           R"({"rank": 2, "hosts": ["a", "b"], "gpus_per_node": 8, "port": 1})",
           R"({"rank": 0, "hosts": ["a"], "gpus_per_node": 8, "port": 1})",
           R"({"rank": 0, "hosts": ["a", "b"], "gpus_per_node": 8, "port": 70000})",
       }) {
    auto r = reply_with(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("gang")) << bad;
  }
  auto rack = ReportFromJson(nlohmann::json::parse(
      R"({"gpus": [], "running": [], "inventory": [], "rack": "r1 slots=8"})"));
  ASSERT_FALSE(rack.ok());
  EXPECT_THAT(rack.status().message(), HasSubstr("rack"));
  for (const char* bad :
       {R"("host_cpu_milli": -1000)", R"("host_cpu_milli": 1.5)", R"("host_memory_bytes": 1e300)",
        R"("host_memory_bytes": 9223372036854775807)"}) {
    auto r = ReportFromJson(nlohmann::json::parse(
        std::string(R"({"gpus": [], "running": [], "inventory": [], )") + bad + "}"));
    EXPECT_FALSE(r.ok()) << bad;
  }
}

TEST(AgentProtocolTest, AMalformedReportSaysWhatIsWrong) {
  auto no_gpus = ReportFromJson(nlohmann::json::parse(R"({"running": []})"));
  ASSERT_FALSE(no_gpus.ok());
  EXPECT_EQ(no_gpus.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_gpus.status().message(), HasSubstr("agent report"));
  EXPECT_THAT(no_gpus.status().message(), HasSubstr("gpus"));
  auto bad_state = ReportFromJson(
      nlohmann::json::parse(R"({"gpus": [[42, 0, null, null, null, null]], "running": []})"));
  ASSERT_FALSE(bad_state.ok());
  EXPECT_THAT(bad_state.status().message(), HasSubstr("GPU state 42"));
  auto bad_kind = ReportFromJson(nlohmann::json::parse(
      R"({"gpus": [], "running": [], "events": [{"seq": 1, "job": [1, 1], "kind": "paused", "at_us": 0}]})"));
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_THAT(bad_kind.status().message(), HasSubstr("event kind \"paused\""));
  // The run names the minutes' part in the store: hex only, bounded.
  for (const char* run : {R"("'; DROP TABLE x")", R"("ABCDEF")", R"(7)"}) {
    auto bad_run = ReportFromJson(
        nlohmann::json::parse(std::string(R"({"gpus": [], "running": [], "run": )") + run + "}"));
    ASSERT_FALSE(bad_run.ok()) << run;
    EXPECT_THAT(bad_run.status().message(), HasSubstr("run")) << run;
  }
  auto long_run = ReportFromJson(nlohmann::json::parse(R"({"gpus": [], "running": [], "run": ")" +
                                                       std::string(65, 'a') + R"("})"));
  EXPECT_THAT(long_run.status().message(), HasSubstr("at most 64 hex digits"));
}

// Found by fuzz/agent_protocol_fuzz.cc: a float where an integer belongs
// reached a cast that is undefined behaviour out of range, and an integer
// too large for its field was silently wrapped.
TEST(AgentProtocolTest, NumbersThatDoNotFitAreErrors) {
  for (const char* text : {
           R"({"gpus": [], "running": [[1, 1e300]]})",
           R"({"gpus": [], "running": [[1, 4294967297]]})",
           R"({"gpus": [], "running": [[1.5, 1]]})",
           R"({"gpus": [[0, 1e300, null, null, null, null]], "running": []})",
           R"({"gpus": [[0, 0, null, 1e300, null, null]], "running": []})",
           R"({"gpus": [[0, 0, null, null, null, null, 0, -60]], "running": []})",
           R"({"gpus": [[0, 0, null, null, null, null, 0, 1e12]], "running": []})",
           R"({"inventory": [{"uuid": "GPU-1", "index": 0, "model": "T4", "memory_bytes": 1,
                              "island": -1e300}], "gpus": [], "running": []})",
           R"({"gpus": [], "running": [], "events": [{"seq": 1, "job": [1, 1], "kind": "exited",
                                                      "at_us": 0, "exit_code": 1e300}]})",
           // A verdict's duration far beyond any: once rounded into nonsense.
           R"({"gpus": [], "running": [], "details": [{"at": 0, "processes": [],
               "verdict": {"uuid": "GPU-1", "state": "idle", "since_us": 0, "at_us": 0,
                 "evidence": {"reason": "", "window_s": 1e300, "quiet_for_s": 0,
                   "observed_for_s": 0, "utilization_pct": null,
                   "max_utilization_pct_in_window": 0, "processes": 0,
                   "process_memory_bytes": 0, "power_w": null, "idle_power_w": null,
                   "confidence": null, "similar_pauses": 0}}}]})",
       }) {
    auto report = ReportFromJson(nlohmann::json::parse(text));
    ASSERT_FALSE(report.ok()) << text;
    EXPECT_EQ(report.status().code(), core::StatusCode::kInvalidArgument) << text;
  }
  for (const char* text : {
           R"({"acked": 0, "lease_s": 1e300, "assigned": []})",
           R"({"acked": 1e300, "lease_s": 30, "assigned": []})",
       }) {
    auto reply = ReplyFromJson(nlohmann::json::parse(text));
    ASSERT_FALSE(reply.ok()) << text;
    EXPECT_EQ(reply.status().code(), core::StatusCode::kInvalidArgument) << text;
  }
}

// An agent's details are bounded: a GPU lists at most 64 processes.
TEST(AgentProtocolTest, WhatAGpuLendsBesideItsHolderIsAGpusMemoryAtMost) {
  nlohmann::json j = ReportToJson(FullReport());
  ASSERT_EQ(j["gpus"][1][6], 29696);
  j["gpus"][1][6] = -1;
  auto negative = ReportFromJson(j);
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(), HasSubstr("not a GPU's memory"));
  // A state this agent's coordinator does not know yet is refused, not guessed.
  j = ReportToJson(FullReport());
  j["gpus"][0][0] = static_cast<int>(observe::GpuState::kShared) + 1;
  EXPECT_FALSE(ReportFromJson(j).ok());
}

TEST(AgentProtocolTest, AGpusProcessesAreBounded) {
  AgentReport r;
  GpuDetail crowded;
  crowded.processes_known = true;
  crowded.verdict.uuid = core::GpuUuid("GPU-1");
  for (uint32_t pid = 1; pid <= 65; ++pid)
    crowded.processes.push_back({pid, "u", "c", {}, false, {}, {}});
  r.details = {{0, crowded}};
  auto back = ReportFromJson(nlohmann::json::parse(ReportToJson(r).dump()));
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), HasSubstr("at most 64"));
}

TEST(HmacTest, MatchesRfc4231) {
  EXPECT_EQ(core::HmacSha256Hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(core::HmacSha256Hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // A key longer than the block is hashed first.
  EXPECT_EQ(core::HmacSha256Hex(std::string(131, '\xaa'),
                                "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(AgentCredentialTest, NamesOneAgentAndGenerationAndOnlyWithItsSecret) {
  const std::string secret(64, 's');
  const std::string credential = AgentCredential(secret, "gpu-07", 3);
  EXPECT_THAT(credential, ::testing::StartsWith("agent.gpu-07.3."));
  auto who = AgentOfCredential(secret, credential);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->name, "gpu-07");
  EXPECT_EQ(who->generation, 3);
  // Another secret, a renamed host, another generation or a made-up
  // digest: refused.
  EXPECT_EQ(AgentOfCredential(std::string(64, 't'), credential).status().code(),
            core::StatusCode::kUnauthenticated);
  std::string renamed = credential;
  renamed.replace(6, 6, "gpu-08");
  EXPECT_FALSE(AgentOfCredential(secret, renamed).ok());
  std::string promoted = credential;
  promoted.replace(13, 1, "4");
  EXPECT_FALSE(AgentOfCredential(secret, promoted).ok());
  EXPECT_FALSE(AgentOfCredential(secret, "agent.gpu-07.00").ok());
  EXPECT_FALSE(AgentOfCredential(secret, "glt_abc").ok());
}

// Credentials from before join tokens (generation 0) still name their
// host, dots in the name included; names that end in digits are not read
// as a generation.
TEST(AgentCredentialTest, ReadsCredentialsFromBeforeGenerations) {
  const std::string secret(64, 's');
  for (const char* name : {"gpu-07", "node.5", "gpu.lab.example"}) {
    auto old = AgentOfCredential(secret, AgentCredential(secret, name, 0));
    ASSERT_TRUE(old.ok()) << name;
    EXPECT_EQ(old->name, name);
    EXPECT_EQ(old->generation, 0);
    auto fresh = AgentOfCredential(secret, AgentCredential(secret, name, 12));
    ASSERT_TRUE(fresh.ok()) << name;
    EXPECT_EQ(fresh->name, name);
    EXPECT_EQ(fresh->generation, 12);
  }
}

TEST(AgentCredentialTest, ChecksNamesAndSecrets) {
  EXPECT_TRUE(CheckAgentName("gpu-07.lab_2").ok());
  EXPECT_THAT(CheckAgentName("a b").message(), HasSubstr("only letters, digits"));
  EXPECT_FALSE(CheckAgentName("").ok());
  EXPECT_THAT(CheckJoinSecret("short").message(), HasSubstr("use 32 or more"));
  EXPECT_TRUE(CheckJoinSecret(std::string(32, 'x')).ok());
}

}  // namespace
}  // namespace gleaner::cluster
