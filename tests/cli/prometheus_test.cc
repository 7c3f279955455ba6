// gleaner's /metrics as Prometheus sees it: a real Prometheus (Debian's
// package) scrapes `gleaner up --fake demo` on loopback with a token, the
// test asks Prometheus's HTTP API what it scraped and compares it with
// gleaner's own answer, the shipped rules load and evaluate, every panel of
// the shipped Grafana dashboard is a valid query, and promtool finds the
// exposition and the rules clean.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "net/http_client.h"
#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using nlohmann::json;
using testing::FreePort;
using testing::KillOnExit;
using testing::StartGleanerUp;

bool OnPath(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return out;
}

const std::string kRules = std::string(GLEANER_SOURCE_DIR) + "/deploy/prometheus/gleaner-rules.yml";
const std::string kRuleTests =
    std::string(GLEANER_SOURCE_DIR) + "/deploy/prometheus/gleaner-rules.test.yml";
const std::string kDashboard =
    std::string(GLEANER_SOURCE_DIR) + "/deploy/grafana/gleaner-dashboard.json";

class PrometheusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!OnPath("prometheus") || !OnPath("promtool")) {
      GTEST_SKIP() << "prometheus and promtool are not installed (apt-get install prometheus)";
    }
  }

  // Prometheus's answer to an instant query: its "result" array.
  json Query(const net::Endpoint& prometheus, const std::string& promql) {
    auto r = net::HttpCall(prometheus, "GET", "/api/v1/query?query=" + UrlEncode(promql), "", "");
    if (!r.ok()) return json{{"error", r.status().message()}};
    json j = json::parse(r->second, nullptr, false);
    if (j.is_discarded() || j.value("status", "") != "success") {
      return json{{"error", r->second}};
    }
    return j["data"]["result"];
  }
};

TEST_F(PrometheusTest, ShippedRulesAreValidAndTheirUnitTestsPass) {
  EXPECT_EQ(std::system(("promtool check rules " + kRules + " >/dev/null").c_str()), 0);
  EXPECT_EQ(std::system(("promtool test rules " + kRuleTests + " >/dev/null").c_str()), 0);
}

TEST_F(PrometheusTest, ARealPrometheusScrapesGleanerUp) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "data").string();
  const int gleaner_port = FreePort();
  const int prometheus_port = FreePort();
  const KillOnExit gleaner = StartGleanerUp(dir, data, gleaner_port);
  // Prometheus scrapes over TCP, so it needs a token like any client: made
  // as docs/metrics.md says (as root in CI).
  const testing::Outcome token =
      testing::Gleaner("--data-dir " + data + " token create --name prometheus --scope read");
  ASSERT_EQ(token.rc, 0) << token.err;
  const size_t at = token.out.find("glt_");
  ASSERT_NE(at, std::string::npos) << token.out;
  const std::string secret = token.out.substr(at, 68);

  const std::string config = dir.Write("prometheus.yml", R"(global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - )" + kRules + R"(
scrape_configs:
  - job_name: gleaner
    static_configs:
      - targets: ['127.0.0.1:)" + std::to_string(gleaner_port) +
                                                             R"(']
    authorization:
      credentials: ')" + secret + R"('
)");
  const KillOnExit prometheus{(dir.path() / "prometheus.pid").string()};
  ASSERT_EQ(std::system(("prometheus --config.file=" + config +
                         " --storage.tsdb.path=" + (dir.path() / "tsdb").string() +
                         " --web.listen-address=127.0.0.1:" + std::to_string(prometheus_port) +
                         " >" + (dir.path() / "prometheus.log").string() + " 2>&1 & echo $! >" +
                         prometheus.pid_file)
                            .c_str()),
            0);
  const net::Endpoint prom =
      std::move(net::ParseServerUrl("http://127.0.0.1:" + std::to_string(prometheus_port))).value();

  // Scraped within a minute: all 8 of the demo's GPUs, and the rules ran.
  json gpus_seen, rule_seen;
  for (int i = 0; i < 600; ++i) {
    gpus_seen = Query(prom, "count(gleaner_gpu_utilization_ratio)");
    rule_seen = Query(prom, "sum(gleaner:gpus:count_by_state)");
    if (gpus_seen.is_array() && !gpus_seen.empty() && gpus_seen[0]["value"][1] == "8" &&
        rule_seen.is_array() && !rule_seen.empty()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(gpus_seen.is_array() && !gpus_seen.empty())
      << gpus_seen.dump() << "\n"
      << testing::Slurp(dir.path() / "prometheus.log") << testing::Slurp(dir.path() / "up.log");
  EXPECT_EQ(gpus_seen[0]["value"][1], "8");
  ASSERT_FALSE(rule_seen.empty()) << rule_seen.dump();
  EXPECT_EQ(rule_seen[0]["value"][1], "8");  // every GPU in exactly one state

  const json up = Query(prom, "up{job=\"gleaner\"}");
  ASSERT_EQ(up.size(), 1u) << up.dump();
  EXPECT_EQ(up[0]["value"][1], "1");
  EXPECT_EQ(Query(prom, "sum(gleaner_gpu_state)")[0]["value"][1], "8");

  // What Prometheus holds is what gleaner says of its GPUs.
  net::Endpoint socket;
  socket.unix_path = data + "/gleaner.sock";
  auto gpus = net::HttpCall(socket, "GET", "/v1/gpus", "", "");
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  const json doc = json::parse(gpus->second);
  for (const json& g : doc["gpus"]) {
    const std::string uuid = g["uuid"];
    const json memory = Query(prom, "gleaner_gpu_memory_total_bytes{uuid=\"" + uuid + "\"}");
    ASSERT_EQ(memory.size(), 1u) << uuid << memory.dump();
    EXPECT_EQ(memory[0]["value"][1], std::to_string(g["memory_total_bytes"].get<int64_t>()));
    EXPECT_EQ(memory[0]["metric"]["model"], g["name"]);
    EXPECT_EQ(memory[0]["metric"]["gpu"], std::to_string(g["index"].get<int>()));
    EXPECT_EQ(memory[0]["metric"]["hostname"], doc["host"]);
  }
  const json idle_cost = Query(prom, "sum(gleaner_idle_cost_per_hour)");
  ASSERT_EQ(idle_cost.size(), 1u) << idle_cost.dump();
  EXPECT_GT(std::stod(idle_cost[0]["value"][1].get<std::string>()), 0);  // the demo has idle GPUs

  // Every panel of the shipped dashboard is a query Prometheus accepts.
  std::ifstream dashboard_file(kDashboard);
  const json dashboard = json::parse(dashboard_file);
  int queries = 0;
  for (const json& panel : dashboard["panels"]) {
    for (const json& target : panel["targets"]) {
      std::string expr = target["expr"];
      for (size_t p; (p = expr.find("$hostname")) != std::string::npos;) expr.replace(p, 9, ".*");
      const json result = Query(prom, expr);
      EXPECT_TRUE(result.is_array()) << panel["title"] << ": " << expr << " -> " << result.dump();
      ++queries;
    }
  }
  EXPECT_GE(queries, 8);

  // promtool lints the exposition as Prometheus's own exporters are linted.
  auto metrics = net::HttpCall(socket, "GET", "/metrics", "", "");
  ASSERT_TRUE(metrics.ok());
  const std::string exposition = dir.Write("metrics.txt", metrics->second);
  EXPECT_EQ(std::system(("promtool check metrics <" + exposition + " >" +
                         (dir.path() / "lint.txt").string() + " 2>&1")
                            .c_str()),
            0)
      << testing::Slurp(dir.path() / "lint.txt");
}

TEST_F(PrometheusTest, MetricsNeedATokenOverTcpLikeEveryRoute) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "data").string();
  const int port = FreePort();
  const KillOnExit gleaner = StartGleanerUp(dir, data, port);
  const net::Endpoint tcp =
      std::move(net::ParseServerUrl("http://127.0.0.1:" + std::to_string(port))).value();
  auto anonymous = net::HttpCall(tcp, "GET", "/metrics", "", "");
  ASSERT_TRUE(anonymous.ok()) << anonymous.status().ToString();
  EXPECT_EQ(anonymous->first, 401);
  // dcgm-exporter's names, on request, for dashboards built on them.
  net::Endpoint socket;
  socket.unix_path = data + "/gleaner.sock";
  std::string body;
  for (int i = 0; i < 100 && body.find("DCGM_FI_DEV_GPU_UTIL{") == std::string::npos; ++i) {
    auto dcgm = net::HttpCall(socket, "GET", "/metrics?dcgm=1", "", "");
    ASSERT_TRUE(dcgm.ok());
    body = dcgm->second;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_THAT(body, ::testing::HasSubstr("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-"));
  EXPECT_THAT(body, ::testing::HasSubstr("DCGM_FI_DEV_FB_USED{"));
}

}  // namespace
}  // namespace gleaner
