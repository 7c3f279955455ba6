// gleaner monitor, profile, eval idle and gpus --explain as a user runs
// them: real processes, a real SQLite file, a real webhook receiver, the
// real NVML loader with the fake driver.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config/config_file.h"
#include "cost/onprem.h"
#include "testing/http_receiver.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::Gleaner;
using testing::Outcome;
using testing::Slurp;

TEST(MonitorBinaryTest, JudgesStoresAndAlertsAWebhook) {
  testing::HttpReceiver receiver;
  testing::TempDir data;
  data.Write("gleaner.toml",
             "[idle]\nidle_after_s = 1\nheld_idle_after_s = 1\n"
             "[sampling]\ninterval_s = 0.2\n"
             "[projects]\nbob = \"notebooks\"\n"
             "[alerts]\nwebhook_url = \"" +
                 receiver.url() +
                 "\"\n"
                 "[[alerts.rule]]\nname = \"GpuHeldIdle\"\nwhen = \"held_idle\"\n"
                 "for_s = 0.5\nseverity = \"warning\"\n");
  // The real NVML path: the fake driver found by the dynamic linker.
  const std::string env = std::string("LD_LIBRARY_PATH=") + GLEANER_FAKE_NVML_DIR +
                          "/modern GLEANER_FAKE_NVML_SCENARIO=demo GLEANER_FAKE_NVML_TIME_S=10";
  Outcome r = Gleaner("monitor --data-dir " + data.path().string() + " --for 3", env);
  ASSERT_EQ(r.rc, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("monitoring nvml every 200ms"));
  EXPECT_THAT(r.out, HasSubstr("-> held_idle: 1 process(es) hold 37.5 GiB"));  // GPU 2
  EXPECT_THAT(r.out, HasSubstr("-> idle: no processes"));                      // GPU 3
  EXPECT_THAT(r.out, HasSubstr("alert firing GpuHeldIdle"));
  EXPECT_THAT(r.out, HasSubstr("stopped"));

  ASSERT_TRUE(receiver.WaitFor(1, 5));
  json payload = json::parse(receiver.bodies().at(0));
  EXPECT_EQ(payload["status"], "firing");
  EXPECT_EQ(payload["alerts"][0]["labels"]["alertname"], "GpuHeldIdle");
  EXPECT_EQ(payload["alerts"][0]["labels"]["gpu_uuid"], "GPU-d4104d1b-5c57-947d-bf56-6c1cc9820638");

  // What the monitor saved is what `gleaner gpus` shows next.
  Outcome gpus = Gleaner("gpus --json --data-dir " + data.path().string(), env);
  ASSERT_EQ(gpus.rc, 0) << gpus.err;
  json doc = json::parse(gpus.out);
  EXPECT_EQ(doc["gpus"][2]["verdict"]["state"], "held_idle");
  EXPECT_EQ(doc["gpus"][3]["verdict"]["state"], "idle");
  EXPECT_EQ(doc["gpus"][0]["verdict"]["state"], "busy");

  Outcome profile = Gleaner("profile --kind gpu --json --data-dir " + data.path().string());
  ASSERT_EQ(profile.rc, 0) << profile.err;
  EXPECT_EQ(json::parse(profile.out)["hour_of_week_utc"].size(), 8u);
  // The fake driver's pids are not real processes, so /proc names no users;
  // the in-process demo declares them.
  EXPECT_THAT(Gleaner("profile --kind user --data-dir " + data.path().string()).out,
              HasSubstr("no user profiles yet"));
  // Simulated history on a real driver's data dir: only when told.
  ASSERT_EQ(Gleaner("monitor --fake demo --for 1 --data-dir " + data.path().string()).rc, 4);
  ASSERT_EQ(
      Gleaner("monitor --fake demo --for 1 --accept-gpu-source --data-dir " + data.path().string())
          .rc,
      0);
  Outcome users = Gleaner("profile --kind user --data-dir " + data.path().string());
  EXPECT_THAT(users.out, HasSubstr("user bob:"));
  EXPECT_THAT(users.out, HasSubstr("user alice:"));
  Outcome projects = Gleaner("profile --kind project --data-dir " + data.path().string());
  EXPECT_THAT(projects.out, HasSubstr("project notebooks:"));
  // bob holds one GPU of eight: an eighth of the host's GPU-time, in the
  // hour this ran (the first, NVML-path run observed no users).
  json shares =
      json::parse(Gleaner("profile --kind user --json --key bob --data-dir " + data.path().string())
                      .out)["hour_of_week_utc"]["bob"];
  double best = 0;
  for (const json& h : shares) {
    if (h.is_number()) best = std::max(best, h.get<double>());
  }
  EXPECT_GT(best, 0.0);
  EXPECT_LE(best, 0.126);
}

// A restart on a real driver (which recalls nothing) goes on from the
// minutes the daemon stored: the quiet GPUs are judged on the first pass,
// not watched for idle_after again.
TEST(MonitorBinaryTest, ARestartedDaemonJudgesFromItsHistoryAtOnce) {
  testing::TempDir data;
  data.Write("gleaner.toml",
             "[idle]\nidle_after_s = 4\nheld_idle_after_s = 4\n"
             "[sampling]\ninterval_s = 0.2\n");
  const std::string env = std::string("LD_LIBRARY_PATH=") + GLEANER_FAKE_NVML_DIR +
                          "/modern GLEANER_FAKE_NVML_SCENARIO=demo GLEANER_FAKE_NVML_TIME_S=10";
  const std::string run = "monitor --data-dir " + data.path().string();
  Outcome first = Gleaner(run + " --for 6", env);
  ASSERT_EQ(first.rc, 0) << first.err << first.out;
  EXPECT_THAT(first.out, HasSubstr("- -> unknown: watching: 0s of data, 4s needed"));
  EXPECT_THAT(first.out, HasSubstr("-> idle: no processes"));  // GPU 3, after 4 s

  Outcome second = Gleaner(run + " --for 1", env);
  ASSERT_EQ(second.rc, 0) << second.err << second.out;
  EXPECT_THAT(second.out, HasSubstr("of stored minutes, so verdicts go on from that history"));
  EXPECT_THAT(second.out, HasSubstr("restored what was learned about pauses"));
  EXPECT_THAT(second.out, Not(HasSubstr("watching")));
  EXPECT_THAT(second.out, HasSubstr("- -> idle: no processes"));  // on the first pass
  EXPECT_THAT(second.out, HasSubstr("- -> held_idle: 1 process(es) hold 37.5 GiB"));
}

TEST(MonitorBinaryTest, BadConfigSaysWhere) {
  testing::TempDir data;
  data.Write("gleaner.toml", "[idle]\nbusy_utilization_pct = 10\nidle_afer_s = 60\n");
  Outcome r = Gleaner("monitor --fake demo --for 1 --data-dir " + data.path().string());
  EXPECT_EQ(r.rc, 4);
  EXPECT_THAT(r.err, HasSubstr("gleaner.toml:3: idle.idle_afer_s: unknown key"));
  Outcome missing = Gleaner("monitor --fake demo --config /no/such.toml");
  EXPECT_EQ(missing.rc, 4);
  EXPECT_THAT(missing.err, HasSubstr("no config file /no/such.toml"));
}

TEST(ExplainBinaryTest, ExplainsOneGpuAndRejectsUnknownOnes) {
  Outcome r = Gleaner("gpus --fake demo --explain 2");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GPU 2  GPU-d4104d1b"));
  EXPECT_THAT(r.out, HasSubstr("state      unknown"));
  EXPECT_THAT(r.out, HasSubstr("thresholds busy at 10%"));
  EXPECT_EQ(Gleaner("gpus --fake demo --explain GPU-d4104").rc, 0);
  Outcome unknown = Gleaner("gpus --fake demo --explain 99");
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_THAT(unknown.err, HasSubstr("no GPU \"99\""));
  Outcome ambiguous = Gleaner("gpus --fake demo --explain GPU-");
  EXPECT_THAT(ambiguous.err, HasSubstr("matches more than one GPU"));
}

TEST(EvalIdleBinaryTest, ScoresAFileAndWritesVerdicts) {
  testing::TempDir dir;
  std::string csv = "value,timestamp_anon,container_ip\n";
  for (int i = 0; i < 200; ++i) {
    csv += std::to_string(i % 50 < 10 ? 70 : 0) + "," + std::to_string(i * 60) + ",gpu-a\n";
  }
  const std::string trace = dir.Write("t.csv", csv);
  const std::string verdicts = (dir.path() / "v.csv").string();
  Outcome r = Gleaner("eval idle --json --trace " + trace + " --verdicts " + verdicts);
  ASSERT_EQ(r.rc, 0) << r.err;
  json doc = json::parse(r.out);
  ASSERT_EQ(doc["classifiers"].size(), 5u);
  EXPECT_EQ(doc["classifiers"][0]["name"], "gleaner");
  for (const char* key : {"precision_10m", "recall_10m", "f1_10m", "precision_30m", "recall_30m",
                          "f1_30m", "idle_time_captured"}) {
    EXPECT_TRUE(doc["classifiers"][0][key].is_number()) << key;
  }
  EXPECT_EQ(doc["hindsight"]["name"], "hindsight_load_2h");
  EXPECT_GE(doc["hindsight"]["recall_10m"].get<double>(), 0.75);
  const std::string lines = Slurp(verdicts);
  EXPECT_EQ(lines.rfind("series,timestamp,utilization,state\ngpu-a,0.000,70,busy\n", 0), 0u);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 201);

  const std::string bad =
      dir.Write("bad.csv", "value,timestamp_anon,container_ip\n1,0,a\nx,60,a\n");
  Outcome error = Gleaner("eval idle --trace " + bad);
  EXPECT_EQ(error.rc, 4);
  EXPECT_THAT(error.err, HasSubstr("bad.csv:3: value is not a number"));
  EXPECT_EQ(Gleaner("eval idle --skip-bad-rows --trace " + bad).rc, 0);
}

TEST(EvalForecastBinaryTest, ScoresAFileBesideTheBaselines) {
  testing::TempDir dir;
  std::string csv = "value,timestamp_anon,container_ip\n";
  for (int i = 0; i < 600; ++i) {
    csv += std::to_string(i % 25 == 0 ? 70 : 0) + "," + std::to_string(i * 60) + ",gpu-a\n";
  }
  const std::string trace = dir.Write("t.csv", csv);
  Outcome r = Gleaner("eval forecast --json --trace " + trace);
  ASSERT_EQ(r.rc, 0) << r.err;
  json doc = json::parse(r.out);
  ASSERT_EQ(doc["forecasts"].size(), 5u);
  EXPECT_EQ(doc["forecasts"][0]["name"], "gleaner");
  EXPECT_GT(doc["scored"].get<int64_t>(), 0);
  EXPECT_LT(doc["forecasts"][0]["pinball_mean_min"].get<double>(),
            doc["forecasts"][1]["pinball_mean_min"].get<double>());  // persistence
  Outcome table = Gleaner("eval forecast --trace " + trace);
  EXPECT_THAT(table.out, HasSubstr("forecast by gleaner"));
  EXPECT_THAT(table.out, HasSubstr("persistence"));

  const std::string bad =
      dir.Write("bad.csv", "value,timestamp_anon,container_ip\n1,0,a\nx,60,a\n");
  Outcome error = Gleaner("eval forecast --trace " + bad);
  EXPECT_EQ(error.rc, 4);
  EXPECT_THAT(error.err, HasSubstr("bad.csv:3: value is not a number"));
}

TEST(ConfigFileTest, DefaultsAndValues) {
  testing::TempDir dir;
  auto defaults = config::LoadConfig((dir.path() / "none.toml").string(), false);
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->sample_interval, core::Seconds(1));
  EXPECT_EQ(defaults->idle.idle_after, core::Seconds(300));
  const std::string path = dir.Write("g.toml", R"(
[idle]
busy_utilization_pct = 5
protected_users = ["ceo"]
protected_gpus = ["GPU-1"]
[sampling]
interval_s = 10
retention_days = 7
[alerts]
[[alerts.rule]]
name = "Hot"
when = "temperature_above"
threshold = 85
for_s = 60
)");
  auto c = config::LoadConfig(path, true);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->idle.busy_utilization_pct, 5);
  EXPECT_EQ(c->idle.protected_users, std::vector<std::string>{"ceo"});
  EXPECT_EQ(c->idle.protected_gpus.at(0).str(), "GPU-1");
  EXPECT_EQ(c->sample_interval, core::Seconds(10));
  EXPECT_EQ(c->idle.max_sample_gap, core::Seconds(30));
  EXPECT_EQ(c->retention, core::Seconds(7 * 86400));
  ASSERT_EQ(c->alert_rules.size(), 1u);
  EXPECT_EQ(c->alert_rules[0].condition, observe::AlertCondition::kTemperatureAbove);
  EXPECT_EQ(c->alert_rules[0].for_duration, core::Seconds(60));

  const std::string bad_rule =
      dir.Write("r.toml", "[[alerts.rule]]\nname = \"x\"\nwhen = \"sometimes\"\n");
  EXPECT_THAT(config::LoadConfig(bad_rule, true).status().message(),
              HasSubstr("r.toml:3: alerts.rule.when: expected one of"));
  const std::string bad_toml = dir.Write("t.toml", "[idle\n");
  EXPECT_THAT(config::LoadConfig(bad_toml, true).status().message(), HasSubstr("t.toml:1:"));
  const std::string ftp = dir.Write("h.toml", "[alerts]\nwebhook_url = \"ftp://x\"\n");
  EXPECT_THAT(config::LoadConfig(ftp, true).status().message(),
              HasSubstr("expected an https:// or http:// URL"));
  const std::string https = dir.Write("s.toml", "[alerts]\nwebhook_url = \"https://x/h\"\n");
  EXPECT_TRUE(config::LoadConfig(https, true).ok());
  const std::string range = dir.Write("n.toml", "[idle]\nmin_confidence = 2\n");
  EXPECT_THAT(config::LoadConfig(range, true).status().message(),
              HasSubstr("n.toml:2: idle.min_confidence"));
}

TEST(ConfigFileTest, AnonymousReadIsOffUnlessTurnedOn) {
  testing::TempDir dir;
  auto defaults = config::LoadConfig((dir.path() / "none.toml").string(), false);
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->ui_anonymous_read);
  auto on = config::LoadConfig(dir.Write("on.toml", "[ui]\nanonymous_read = true\n"), true);
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->ui_anonymous_read);
  EXPECT_THAT(config::LoadConfig(dir.Write("s.toml", "[ui]\nanonymous_read = \"yes\"\n"), true)
                  .status()
                  .message(),
              HasSubstr("s.toml:2: ui.anonymous_read: expected true or false"));
  EXPECT_THAT(
      config::LoadConfig(dir.Write("k.toml", "[ui]\nanonymous = true\n"), true).status().message(),
      HasSubstr("k.toml:2: ui.anonymous: unknown key; expected one of: anonymous_read"));
  EXPECT_THAT(config::LoadConfig(dir.Write("t.toml", "ui = 1\n"), true).status().message(),
              HasSubstr("t.toml:1: ui: expected a table"));
}

TEST(ConfigFileTest, SchedulerQuotasAndReservations) {
  testing::TempDir dir;
  const std::string path = dir.Write("s.toml", R"(
[scheduler]
min_runtime_s = 120
backfill = true
[scheduler.project.vision]
guaranteed_gpus = 4
borrow_limit_gpus = 2
weight = 2
[[scheduler.reservation]]
name = "vision-nightly"
project = "vision"
gpus = 2
gpu_model = "H100"
starts_at = 2026-12-01T18:00:00Z
ends_at = 2026-12-02T06:00:00+01:00
)");
  auto c = config::LoadConfig(path, true);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->scheduler.min_runtime, core::Seconds(120));
  EXPECT_TRUE(c->scheduler.backfill);
  EXPECT_EQ(c->scheduler.projects.at("vision").guaranteed_gpus, 4);
  EXPECT_EQ(c->scheduler.projects.at("vision").borrow_limit_gpus, 2);
  EXPECT_EQ(c->scheduler.projects.at("vision").weight, 2);
  ASSERT_EQ(c->scheduler.reservations.size(), 1u);
  const sched::Reservation& r = c->scheduler.reservations[0];
  EXPECT_EQ(r.name, "vision-nightly");
  EXPECT_EQ(r.gpus, 2);
  EXPECT_EQ(r.gpu_model, "H100");
  // date -d 2026-12-01T18:00:00Z +%s; the end is 05:00 UTC the next day.
  EXPECT_EQ(r.starts_at, core::FromUnixMicros(int64_t{1796148000} * 1'000'000));
  EXPECT_EQ(r.ends_at, core::FromUnixMicros(int64_t{1796148000 + 11 * 3600} * 1'000'000));

  const std::string local = dir.Write("l.toml", R"([[scheduler.reservation]]
name = "x"
project = "p"
starts_at = 2026-12-01T18:00:00
)");
  EXPECT_THAT(config::LoadConfig(local, true).status().message(),
              HasSubstr("l.toml:4: scheduler.reservation.starts_at: expected a date and time "
                        "with its offset"));
  const std::string backwards = dir.Write("b.toml", R"([[scheduler.reservation]]
name = "x"
project = "p"
starts_at = 2026-12-02T00:00:00Z
ends_at = 2026-12-01T00:00:00Z
)");
  EXPECT_THAT(config::LoadConfig(backwards, true).status().message(),
              HasSubstr("b.toml:1: scheduler.reservation:"));
  const std::string typo = dir.Write("k.toml", "[scheduler]\nbackfil = true\n");
  EXPECT_THAT(config::LoadConfig(typo, true).status().message(),
              HasSubstr("k.toml:2: scheduler.backfil: unknown key"));
}

TEST(ConfigFileTest, CostSection) {
  testing::TempDir dir;
  const std::string path = dir.Write("c.toml", R"(
[cost]
currency = "CNY"
cny_per_usd = 7.1
max_price_age_days = 90
catalogs = ["prices.csv", "/etc/gleaner/more.csv"]
[cost.gpu_models]
"NVIDIA H100 80GB HBM3" = "H100-80GB-SXM"
[cost.onprem."A100-80GB"]
electricity_per_kwh = 0.7
currency = "CNY"
[cost.onprem."L40S"]
server_capex = 90000
server_power_kw = 3
gpu_busy_w = 350
gpu_idle_w = 35
)");
  auto c = config::LoadConfig(path, true);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const cost::CostSettings& s = c->cost;
  EXPECT_EQ(s.currency, cost::Currency::kCny);
  EXPECT_EQ(s.rates.cny_per_usd, 7.1);
  EXPECT_EQ(s.max_price_age_days, 90);
  // A relative catalog is the config file's neighbour.
  EXPECT_EQ(s.catalog_files, (std::vector<std::string>{(dir.path() / "prices.csv").string(),
                                                       "/etc/gleaner/more.csv"}));
  EXPECT_EQ(s.ModelOf("NVIDIA H100 80GB HBM3", std::nullopt), "H100-80GB-SXM");
  EXPECT_EQ(s.ModelOf("NVIDIA A100-SXM4-80GB", std::nullopt), "A100-80GB");
  // Laid over the A100 defaults: only power price and currency change.
  const cost::OnPremParams a100 = *s.OnPremFor("A100-80GB");
  EXPECT_EQ(a100.electricity_per_kwh, 0.7);
  EXPECT_EQ(a100.currency, cost::Currency::kCny);
  EXPECT_EQ(a100.server_capex, cost::DefaultOnPremParams("A100-80GB")->server_capex);
  EXPECT_THAT(a100.source, HasSubstr("gleaner.toml (currency, electricity_per_kwh)"));
  EXPECT_EQ(s.OnPremFor("L40S")->gpu_busy_w, 350);
  EXPECT_FALSE(s.OnPremFor("T4").has_value());

  const std::string missing = dir.Write("m.toml", "[cost.onprem.\"T4\"]\ngpu_busy_w = 70\n");
  EXPECT_THAT(config::LoadConfig(missing, true).status().message(),
              HasSubstr("m.toml:1: cost.onprem.T4.server_capex: required"));
  const std::string typo = dir.Write("t.toml", "[cost.onprem.\"A100-80GB\"]\npeu = 1.2\n");
  EXPECT_THAT(config::LoadConfig(typo, true).status().message(),
              HasSubstr("t.toml:2: cost.onprem.A100-80GB.peu: unknown key"));
  const std::string range = dir.Write("r.toml", "[cost.onprem.\"A100-80GB\"]\npue = 0.5\n");
  EXPECT_THAT(config::LoadConfig(range, true).status().message(),
              HasSubstr("pue: expected at least 1"));
  const std::string money = dir.Write("e.toml", "[cost]\ncurrency = \"EUR\"\n");
  EXPECT_THAT(config::LoadConfig(money, true).status().message(),
              HasSubstr("e.toml:2: cost.currency: expected \"USD\" or \"CNY\""));
}

}  // namespace
}  // namespace gleaner
