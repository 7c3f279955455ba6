// The dashboard in a real browser: headless Chromium (Debian's package)
// loads the page from `gleaner up --fake demo` over TCP, signs in with a
// token passed in the URL fragment, and shows the demo's eight GPUs with
// their verdicts and the jobs submitted; with #lang=zh-CN the same page
// is in Chinese; without a token it asks for one. The screenshot is kept
// as artifacts/dashboard.png beside the test binaries. Skipped where
// Chromium is not installed (scripts/quickstart.sh test installs it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <thread>

#include "server/http_client.h"
#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

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
  const server::Endpoint api{"", "127.0.0.1", static_cast<uint16_t>(port)};
  for (int i = 0; i < 200; ++i) {
    auto r = server::HttpCall(api, "GET", "/v1/gpus", "", token);
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

  std::string chromium_;
  testing::TempDir dir_;
};

TEST_F(DashboardBrowserTest, ShowsTheGpusAndJobsInEnglishAndChinese) {
  const std::string data = (dir_.path() / "data").string();
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

// [ui] anonymous_read = true in the data directory's gleaner.toml: the
// page reads without a token and says it is a read-only view, offers no
// job buttons, and every write still needs a token.
TEST_F(DashboardBrowserTest, AnAnonymousReaderSeesAReadOnlyView) {
  const std::string data = (dir_.path() / "data").string();
  dir_.Write("data/gleaner.toml", "[ui]\nanonymous_read = true\n");
  const int port = testing::FreePort();
  const testing::KillOnExit gleaner = testing::StartGleanerUp(dir_, data, port, 120);
  const testing::Outcome submitted =
      testing::Gleaner("--data-dir " + data + " submit --gpus 8 -- sleep 60");
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  ASSERT_TRUE(FirstPassDone(port, "")) << testing::Slurp(dir_.path() / "up.log");
  const server::Endpoint api{"", "127.0.0.1", static_cast<uint16_t>(port)};
  auto cancel = server::HttpCall(api, "POST", "/v1/jobs/1/cancel", "", "");
  ASSERT_TRUE(cancel.ok());
  EXPECT_EQ(cancel->first, 401);

  const std::string dom = Dom("http://127.0.0.1:" + std::to_string(port) + "/#lang=en");
  EXPECT_THAT(dom, HasSubstr("<div id=\"dashboard\">")) << dom;
  EXPECT_EQ(All(dom, R"re(class="(gpu-card) state-)re").size(), 8u);
  EXPECT_THAT(dom, HasSubstr("Read-only view"));
  EXPECT_EQ(All(dom, R"re(<tr class="job-row [^"]*" data-job-id="(\d+)")re").size(), 1u);
  EXPECT_THAT(dom, Not(HasSubstr("data-action=")));
}

}  // namespace
}  // namespace gleaner
