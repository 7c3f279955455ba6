// The dashboard in a real browser: headless Chromium (Debian's package)
// loads the page from `gleaner up --fake demo` over TCP, signs in with a
// token passed in the URL fragment, and shows the demo's eight GPUs with
// their verdicts and the jobs submitted; with #lang=zh-CN the same page
// is in Chinese; without a token it asks for one. The screenshot is kept
// as artifacts/dashboard.png beside the test binaries. Skipped where
// Chromium is not installed (scripts/quickstart.sh test installs it).
// Served by a coordinator (`gleaner server`, two `gleaner agent`s with
// simulated GPUs), the page has a wall per host with its health.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "net/http_client.h"
#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"

namespace gleaner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

// Every match of `pattern`'s first group in `text`, in order.
std::vector<std::string> All(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

// Waits (up to 20 s) until gleaner has looked at the GPUs once: the page
// shows them from then on.
bool FirstPassDone(int port, const std::string& token) {
  const net::Endpoint api{.host = "127.0.0.1", .port = static_cast<uint16_t>(port)};
  for (int i = 0; i < 200; ++i) {
    auto r = net::HttpCall(api, "GET", "/v1/gpus", "", token);
    if (r.ok() && r->first == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

class DashboardBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = Chromium();
    if (chromium_.empty()) GTEST_SKIP() << "no Chromium here: apt-get install chromium";
  }

  // Chromium's command line: its own profile, no first-run dialogs, and
  // time enough (virtual time: timers run ahead, fetches are awaited) for
  // the page to sign in and ask for everything at least once.
  std::string Flags() const {
    return " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
           " --virtual-time-budget=15000 --user-data-dir=" +
           (dir_.path() / "profile").string() + " ";
  }

  // The DOM the page has built after loading `url`.
  std::string Dom(const std::string& url) {
    const std::string out = (dir_.path() / "dom.html").string();
    std::filesystem::remove(out);
    const int rc = std::system(
        ("timeout 120 " + chromium_ + Flags() + "--dump-dom '" + url + "' >" + out + " 2>/dev/null")
            .c_str());
    EXPECT_EQ(rc, 0) << url;
    return testing::Slurp(out);
  }

  // Starts `gleaner ARGS` in the background, its output in `name`.log;
  // stopped (SIGTERM) when the returned guard goes out of scope.
  testing::KillOnExit Start(const std::string& name, const std::string& args) {
    const std::string pid_file = (dir_.path() / (name + ".pid")).string();
    const int rc = std::system((std::string(GLEANER_BINARY) + " " + args + " >" + Log(name) +
                                " 2>&1 & echo $! >" + pid_file)
                                   .c_str());
    EXPECT_EQ(rc, 0) << args;
    return testing::KillOnExit{pid_file};
  }

  std::string Log(const std::string& name) const {
    return (dir_.path() / (name + ".log")).string();
  }

  // Waits (up to 30 s) until `name`.log says `text`.
  bool WaitForLog(const std::string& name, const std::string& text) const {
    for (int i = 0; i < 600; ++i) {
      if (testing::Slurp(Log(name)).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  std::string chromium_;
  testing::TempDir dir_;
};

TEST_F(DashboardBrowserTest, ShowsTheGpusAndJobsInEnglishAndChinese) {
  const std::string data = (dir_.path() / "data").string();
  // The dashboard acts for root, who runs the test and owns its jobs:
  // root's tokens must be allowed explicitly.
  std::filesystem::create_directory(data);
  std::filesystem::permissions(data, std::filesystem::perms::owner_all);
  dir_.Write("data/gleaner.toml", "[api]\nallow_root_tokens = true\n");
  const int port = testing::FreePort();
  const testing::KillOnExit gleaner = testing::StartGleanerUp(dir_, data, port, 180);
  const testing::Outcome token =
      testing::Gleaner("--data-dir " + data + " token create --name dashboard");
  ASSERT_EQ(token.rc, 0) << token.err;
  const size_t at = token.out.find("glt_");
  ASSERT_NE(at, std::string::npos) << token.out;
  const std::string secret = token.out.substr(at, 68);
  // One job that runs on an idle GPU, one that waits: more GPUs than are idle.
  for (const char* gpus : {"1", "8"}) {
    const testing::Outcome submitted =
        testing::Gleaner("--data-dir " + data + " submit --gpus " + gpus + " -- sleep 60");
    ASSERT_EQ(submitted.rc, 0) << submitted.err;
  }
  ASSERT_TRUE(FirstPassDone(port, secret)) << testing::Slurp(dir_.path() / "up.log");
  const std::string page = "http://127.0.0.1:" + std::to_string(port) + "/";

  const std::string en = Dom(page + "#token=" + secret + "&lang=en");
  EXPECT_THAT(en, HasSubstr("<html lang=\"en\""));
  EXPECT_THAT(en, HasSubstr("<div id=\"dashboard\">")) << "the dashboard is hidden: " << en;
  const std::vector<std::string> states =
      All(en, R"re(class="gpu-card state-[a-z_]+" [^>]*data-state="([a-z_]+)")re");
  EXPECT_EQ(states.size(), 8u) << en;
  const std::set<std::string> verdicts = {"busy",      "idle",     "held_idle", "harvested",
                                          "protected", "reserved", "unknown",   "unhealthy"};
  for (const std::string& s : states) EXPECT_TRUE(verdicts.count(s)) << s;
  // The demo's training GPUs are busy from the start, and each card says so
  // in words, not colour alone.
  EXPECT_THAT(states, ::testing::Contains("busy"));
  EXPECT_THAT(en, HasSubstr("<span class=\"verdict-badge\">busy</span>"));
  EXPECT_THAT(en, HasSubstr("Why this verdict"));  // the evidence, shown on hover
  EXPECT_THAT(en, HasSubstr("class=\"proc-user\">"));
  // Two sparklines per GPU, drawn by uPlot (on no history yet, too).
  EXPECT_EQ(All(en, R"re((<canvas))re").size(), 16u);
  const std::vector<std::string> jobs =
      All(en, R"re(<tr class="job-row [^"]*" data-job-id="(\d+)")re");
  EXPECT_EQ(jobs, (std::vector<std::string>{"1", "2"})) << en;
  EXPECT_THAT(en, HasSubstr("<code>sleep 60</code>"));
  EXPECT_THAT(en, HasSubstr("Queued and running jobs"));
  EXPECT_THAT(en, HasSubstr("What idleness costs"));
  EXPECT_THAT(en, HasSubstr(" · policy v1</span>"));  // the policy version running
  EXPECT_THAT(en, HasSubstr("Usage by hour of the week"));
  // The tests run as root, who may act on every job.
  EXPECT_THAT(en, HasSubstr("data-action=\"cancel\""));
  EXPECT_THAT(en, Not(HasSubstr("排队与运行中的作业")));

  const std::string zh = Dom(page + "#token=" + secret + "&lang=zh-CN");
  EXPECT_THAT(zh, HasSubstr("<html lang=\"zh-CN\""));
  EXPECT_EQ(All(zh, R"re(class="(gpu-card) state-)re").size(), 8u);
  EXPECT_THAT(zh, HasSubstr("排队与运行中的作业"));
  EXPECT_THAT(zh, HasSubstr("<span class=\"verdict-badge\">忙碌</span>"));
  EXPECT_THAT(zh, HasSubstr("闲置的成本"));
  EXPECT_THAT(zh, HasSubstr(" · 策略 v1</span>"));
  EXPECT_THAT(zh, HasSubstr("判定依据"));
  EXPECT_THAT(zh, Not(HasSubstr("Queued and running jobs")));
  EXPECT_THAT(zh, Not(HasSubstr(">busy<")));
  EXPECT_EQ(All(zh, R"re(<tr class="job-row [^"]*" data-job-id="(\d+)")re").size(), 2u);

  // Without a token the page asks for one and shows nothing else.
  const std::string anonymous = Dom(page + "#lang=en");
  EXPECT_THAT(anonymous, HasSubstr("<section id=\"login\" class=\"panel login\" aria-labelledby"));
  EXPECT_THAT(anonymous, HasSubstr("Sign in with a token"));
  EXPECT_TRUE(All(anonymous, R"re(class="(gpu-card) )re").empty());

  const std::filesystem::path artifacts =
      std::filesystem::path(GLEANER_BINARY).parent_path() / "artifacts";
  std::filesystem::create_directories(artifacts);
  const auto screenshot = [&](const std::string& url, const std::string& png) {
    std::filesystem::remove(png);
    return std::system(("timeout 120 " + chromium_ + Flags() +
                        "--window-size=1280,2000 --screenshot=" + png + " '" + url +
                        "' >/dev/null 2>&1")
                           .c_str());
  };
  const std::string png = (artifacts / "dashboard.png").string();
  ASSERT_EQ(screenshot(page + "#token=" + secret + "&lang=en&theme=light", png), 0);
  const std::string blank_png = (dir_.path() / "blank.png").string();
  ASSERT_EQ(
      screenshot("file://" + dir_.Write("blank.html", "<html><body></body></html>"), blank_png), 0);
  ASSERT_TRUE(std::filesystem::exists(png));
  EXPECT_EQ(testing::Slurp(png).substr(1, 3), "PNG");
  EXPECT_GT(std::filesystem::file_size(png), 3 * std::filesystem::file_size(blank_png))
      << "the dashboard's screenshot looks like an empty page";
}

// A job that waits for approval shows its state in words and, to those who
// may decide it, approve and deny buttons; #job=ID opens its history, a
// timeline under its row.
TEST_F(DashboardBrowserTest, AWaitingJobOffersApprovalAndItsHistoryOpensUnderIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create a user";
  testing::ThrowawayUser submitter("glwaits");
  ASSERT_TRUE(submitter.ok());
  const std::string data = (dir_.path() / "data").string();
  std::filesystem::create_directory(data);
  std::filesystem::permissions(data, std::filesystem::perms::owner_all);
  dir_.Write("data/gleaner.toml",
             "[api]\nallow_root_tokens = true\n[projects.vision]\nusers = [\"" + submitter.name() +
                 "\"]\n[rules.class.critical]\napproval = \"always\"\n");
  const int port = testing::FreePort();
  const testing::KillOnExit gleaner = testing::StartGleanerUp(dir_, data, port, 120);
  const auto secret_of = [&](const std::string& args) {
    const testing::Outcome made = testing::Gleaner("--data-dir " + data + " token create " + args);
    EXPECT_EQ(made.rc, 0) << made.err;
    const size_t at = made.out.find("glt_");
    return at == std::string::npos ? std::string() : made.out.substr(at, 68);
  };
  const std::string root = secret_of("--name dashboard");
  const std::string theirs = secret_of("--user " + submitter.name());
  net::Endpoint api =
      std::move(net::ParseServerUrl("http://127.0.0.1:" + std::to_string(port))).value();
  auto submitted = net::HttpCall(
      api, "POST", "/v1/jobs",
      R"({"command": ["sleep", "60"], "working_dir": "/tmp", "priority_class": "critical"})",
      theirs);
  ASSERT_TRUE(submitted.ok());
  ASSERT_EQ(submitted->first, 201) << submitted->second;
  ASSERT_TRUE(FirstPassDone(port, root)) << testing::Slurp(dir_.path() / "up.log");

  const std::string page = "http://127.0.0.1:" + std::to_string(port) + "/";
  const std::string en = Dom(page + "#token=" + root + "&lang=en&job=1");
  EXPECT_THAT(en, HasSubstr("data-job-id=\"1\" data-state=\"pending_approval\""));
  EXPECT_THAT(en, HasSubstr(">waiting for approval<"));
  EXPECT_THAT(en, HasSubstr("data-action=\"approve\""));
  EXPECT_THAT(en, HasSubstr("data-action=\"deny\""));
  EXPECT_THAT(en, HasSubstr("What happened to job 1"));
  EXPECT_THAT(en, HasSubstr("<li class=\"event event-submitted\" data-kind=\"submitted\">"));
  EXPECT_THAT(en, HasSubstr("by " + submitter.name()));
  // The submitter sees the state, but no button to decide it.
  const std::string mine = Dom(page + "#token=" + theirs + "&lang=zh-CN");
  EXPECT_THAT(mine, HasSubstr(">待审批<"));
  EXPECT_THAT(mine, Not(HasSubstr("data-action=\"approve\"")));
  EXPECT_THAT(mine, HasSubstr("data-action=\"history\""));
}

// [ui] anonymous_read = true in the data directory's gleaner.toml: the
// page reads without a token and says it is a read-only view, offers no
// job buttons, and every write still needs a token.
TEST_F(DashboardBrowserTest, AnAnonymousReaderSeesAReadOnlyView) {
  const std::string data = (dir_.path() / "data").string();
  // On a Slurm node: squeue answers with what a real Slurm 22.05 recorded
  // (job 1 holds GPUs 0 and 1 of node "vm").
  const std::string squeue =
      dir_.Write("squeue", std::string("#!/bin/sh\nexec cat ") + GLEANER_SOURCE_DIR +
                               "/tests/slurm/testdata/squeue-22.05.json\n");
  std::filesystem::permissions(squeue, std::filesystem::perms::owner_all);
  dir_.Write("data/gleaner.toml",
             "[ui]\nanonymous_read = true\n[slurm]\nenabled = true\n"
             "node = \"vm\"\npoll_interval_s = 1\nsqueue = \"" +
                 squeue + "\"\n");
  const int port = testing::FreePort();
  const testing::KillOnExit gleaner = testing::StartGleanerUp(dir_, data, port, 120);
  const testing::Outcome submitted =
      testing::Gleaner("--data-dir " + data + " submit --gpus 8 -- sleep 60");
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  ASSERT_TRUE(FirstPassDone(port, "")) << testing::Slurp(dir_.path() / "up.log");
  const net::Endpoint api{.host = "127.0.0.1", .port = static_cast<uint16_t>(port)};
  auto cancel = net::HttpCall(api, "POST", "/v1/jobs/1/cancel", "", "");
  ASSERT_TRUE(cancel.ok());
  EXPECT_EQ(cancel->first, 401);

  const std::string dom = Dom("http://127.0.0.1:" + std::to_string(port) + "/#lang=en");
  EXPECT_THAT(dom, HasSubstr("<div id=\"dashboard\">")) << dom;
  EXPECT_EQ(All(dom, R"re(class="(gpu-card) state-)re").size(), 8u);
  EXPECT_THAT(dom, HasSubstr("Read-only view"));
  // The cards of the GPUs a Slurm job holds name it.
  EXPECT_EQ(
      All(dom, R"re(class="gpu-slurm">(Slurm job 1 · slurmalice/research · scavenger)<)re").size(),
      2u)
      << dom;
  EXPECT_EQ(All(dom, R"re(<tr class="job-row [^"]*" data-job-id="(\d+)")re").size(), 1u);
  EXPECT_THAT(dom, Not(HasSubstr("data-action=")));
}

// Served by a coordinator, GET /v1/gpus is gleaner.cluster/v1: the page
// draws a wall per agent's host, headed by its health and last report, with
// a card per GPU in the state its agent reported and the reason as the
// evidence; the jobs, money and heatmaps work as on one host.
TEST_F(DashboardBrowserTest, ACoordinatorShowsAWallPerHostWithItsHealth) {
  const std::string secret_file = dir_.Write("join.secret", std::string(64, 'k') + "\n");
  ASSERT_EQ(chmod(secret_file.c_str(), 0600), 0);
  const std::string server_data = (dir_.path() / "server").string();
  const int port = testing::FreePort();
  const std::string address = "http://127.0.0.1:" + std::to_string(port);
  const testing::KillOnExit server =
      Start("server", "server --listen 127.0.0.1:" + std::to_string(port) + " --join-secret-file " +
                          secret_file + " --data-dir " + server_data + " --for 180");
  ASSERT_TRUE(WaitForLog("server", "leading")) << testing::Slurp(Log("server"));
  const auto agent = [&](const std::string& name) {
    return Start(name, "agent --server " + address + " --join-token-file " +
                           testing::JoinTokenFile(dir_, server_data, name) + " --name " + name +
                           " --fake demo --interval 0.5 --for 180 --data-dir " +
                           (dir_.path() / name).string());
  };
  const testing::KillOnExit agent_a = agent("hostA");
  const testing::KillOnExit agent_b = agent("hostB");
  for (const char* name : {"hostA", "hostB"}) {
    ASSERT_TRUE(WaitForLog(name, "reporting to the coordinator")) << testing::Slurp(Log(name));
  }
  const testing::Outcome token = testing::Gleaner(
      "--data-dir " + server_data + " token create --name dashboard" + testing::OrdinaryUserFlag());
  ASSERT_EQ(token.rc, 0) << token.err;
  const size_t at = token.out.find("glt_");
  ASSERT_NE(at, std::string::npos) << token.out;
  const std::string secret = token.out.substr(at, 68);
  const testing::Outcome submitted = testing::Gleaner(
      "--server " + address + " --token " + secret + " submit --gpus 1 --workdir /tmp -- sleep 30");
  ASSERT_EQ(submitted.rc, 0) << submitted.err;  // nobody's: /tmp, not the build, is theirs to enter

  // Both hosts up, and each GPU with a verdict its agent reported.
  const net::Endpoint api{.host = "127.0.0.1", .port = static_cast<uint16_t>(port)};
  nlohmann::json cluster;
  const auto ready = [&cluster] {
    if (cluster["schema"] != "gleaner.cluster/v1" || cluster["hosts"].size() != 2) return false;
    for (const auto& h : cluster["hosts"]) {
      if (h["health"] != "up" || h["gpus"].size() != 8) return false;
      for (const auto& g : h["gpus"]) {
        if (g["state"] == "unknown") return false;
      }
    }
    return true;
  };
  for (int i = 0; i < 300 && !ready(); ++i) {
    auto r = net::HttpCall(api, "GET", "/v1/gpus", "", secret);
    if (r.ok() && r->first == 200) cluster = nlohmann::json::parse(r->second, nullptr, false);
    if (!ready()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(ready()) << cluster.dump() << testing::Slurp(Log("server"));

  const std::string en = Dom(address + "/#token=" + secret + "&lang=en");
  EXPECT_THAT(en, HasSubstr("<div id=\"dashboard\">")) << "the dashboard is hidden: " << en;
  // Each host's section, its health, and its cards in order.
  std::map<std::string, std::string> health;
  std::map<std::string, std::vector<std::string>> states;
  const std::regex part(
      R"re(<section class="host" [^>]*data-host="([^"]+)" data-health="([a-z]+)"|class="gpu-card state-[a-z_]+" [^>]*data-state="([a-z_]+)")re");
  std::string host;
  for (auto it = std::sregex_iterator(en.begin(), en.end(), part); it != std::sregex_iterator();
       ++it) {
    if ((*it)[1].matched) {
      host = (*it)[1].str();
      health[host] = (*it)[2].str();
    } else {
      states[host].push_back((*it)[3].str());
    }
  }
  EXPECT_EQ(health, (std::map<std::string, std::string>{{"hostA", "up"}, {"hostB", "up"}})) << en;
  const std::set<std::string> verdicts = {"busy",      "idle",     "held_idle", "harvested",
                                          "protected", "reserved", "unknown",   "unhealthy"};
  for (const char* name : {"hostA", "hostB"}) {
    EXPECT_EQ(states[name].size(), 8u) << name << ": " << en;
    for (const std::string& s : states[name]) EXPECT_TRUE(verdicts.count(s)) << s;
    // The demo's training GPUs are busy on every host, and say so in words.
    EXPECT_THAT(states[name], ::testing::Contains("busy")) << name;
    EXPECT_THAT(en, HasSubstr(std::string(name) + " · 8 GPUs</h3>"));
  }
  EXPECT_EQ(All(en, R"re(<span class="health-badge health-up" [^>]*>(up)</span>)re").size(), 2u);
  EXPECT_EQ(All(en, R"re(<p class="host-detail">last report (\d+) s ago · jobs running: \d+</p>)re")
                .size(),
            2u)
      << en;
  EXPECT_THAT(en, HasSubstr("<span class=\"verdict-badge\">busy</span>"));
  // The evidence, shown on hover, as on one host: the reason each agent
  // gave, with its figures, and whether the coordinator may lend it now.
  EXPECT_EQ(All(en, R"re(<p class="evidence-title">(Why this verdict)</p>)re").size(), 16u);
  EXPECT_TRUE(All(en, R"re(<p class="evidence-reason">([^<]+)</p>)re").size() == 16u) << en;
  EXPECT_EQ(All(en, R"re(<dt>(Free to lend now)</dt>)re").size(), 16u) << en;
  EXPECT_EQ(All(en, R"re(<dt>(Quiet for)</dt>)re").size(), 16u) << en;
  // Readings where the agent reported them, and two sparklines per GPU.
  EXPECT_THAT(en, ::testing::ContainsRegex("<dt>Utilization</dt><dd>[0-9]+%</dd>"));
  EXPECT_EQ(All(en, R"re((<canvas))re").size(), 32u);
  // The processes on each GPU, with their users, as the agents saw them:
  // the demo's training job is alice's on both hosts.
  EXPECT_GE(All(en, R"re(<span class="proc-user"[^>]*>(alice)</span>)re").size(), 2u) << en;
  EXPECT_THAT(en, HasSubstr("coordinator · 2 hosts"));
  // The rest of the page works as on one host: no part failed.
  EXPECT_THAT(en, HasSubstr("<p id=\"banner\" class=\"banner\" role=\"alert\" hidden=\"\">")) << en;
  EXPECT_EQ(All(en, R"re(<tr class="job-row [^"]*" data-job-id="(\d+)")re"),
            (std::vector<std::string>{"1"}));
  EXPECT_THAT(en, HasSubstr("<code>sleep 30</code>"));
  EXPECT_THAT(en, HasSubstr("class=\"money-table\""));
  EXPECT_THAT(en, ::testing::ContainsRegex("heatmap-list|No hour-of-week profiles yet"));

  const std::string zh = Dom(address + "/#token=" + secret + "&lang=zh-CN");
  EXPECT_THAT(zh, HasSubstr("协调器 · 2 台主机"));
  EXPECT_EQ(All(zh, R"re(<span class="health-badge health-up" [^>]*>(在线)</span>)re").size(), 2u);
  EXPECT_THAT(zh, HasSubstr("hostB · 8 块 GPU</h3>"));
  EXPECT_EQ(All(zh, R"re(class="(gpu-card) state-)re").size(), 16u);
  EXPECT_THAT(zh, Not(HasSubstr(">up<")));

  const std::filesystem::path artifacts =
      std::filesystem::path(GLEANER_BINARY).parent_path() / "artifacts";
  std::filesystem::create_directories(artifacts);
  const std::string png = (artifacts / "dashboard-cluster.png").string();
  std::filesystem::remove(png);
  EXPECT_EQ(std::system(("timeout 120 " + chromium_ + Flags() +
                         "--window-size=1280,2600 --screenshot=" + png + " '" + address +
                         "/#token=" + secret + "&lang=en&theme=light' >/dev/null 2>&1")
                            .c_str()),
            0);
  // The job runs on an agent: cancelled, its agent kills it (jobs outlive
  // their agent).
  net::HttpCall(api, "POST", "/v1/jobs/1/cancel", "", secret).status().IgnoreError();
  for (int i = 0; i < 200; ++i) {
    if ((testing::Slurp(Log("hostA")) + testing::Slurp(Log("hostB"))).find("killing it") !=
        std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace
}  // namespace gleaner
