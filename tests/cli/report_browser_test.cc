// The simulator's report in a real browser: headless Chromium opens
// report.html from disk (no network), renders its charts, and leaves a
// screenshot beside the test binaries (artifacts/report.png). Skipped
// where Chromium is not installed (scripts/quickstart.sh test installs it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using ::testing::HasSubstr;

std::string Chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

TEST(ReportBrowserTest, ChromiumRendersTheReportsCharts) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "no Chromium here: apt-get install chromium";
  testing::TempDir dir;
  const std::string trace = dir.Write("tiny.csv",
                                      "job_id,submission_time,duration,num_gpu\n"
                                      "a,0,600,8\nb,10,300,4\nc,20,1200,2\nd,30,60,1\n"
                                      "e,40,900,16\nf,50,100,1\n");
  const std::string out = (dir.path() / "out").string();
  auto replay = testing::Gleaner("sim replay --itp " + trace + " --gpus 16 --out " + out);
  ASSERT_EQ(replay.rc, 0) << replay.err;

  // The DOM after load: what the browser built from the file.
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
      " --user-data-dir=" +
      (dir.path() / "profile").string() + " ";
  const std::string dom_file = (dir.path() / "dom.html").string();
  ASSERT_EQ(std::system(("timeout 120 " + chromium + flags + "--dump-dom file://" + out +
                         "/report.html >" + dom_file + " 2>/dev/null")
                            .c_str()),
            0);
  const std::string dom = testing::Slurp(dom_file);
  EXPECT_THAT(dom, HasSubstr("<svg"));
  size_t charts = 0;
  for (size_t at = dom.find("<svg"); at != std::string::npos; at = dom.find("<svg", at + 1)) {
    ++charts;
  }
  EXPECT_GE(charts, 3u) << "utilization, queue length and completion-time charts";

  // The screenshot, kept as the test's artifact, beside one of an empty
  // page taken the same way: the charts must show.
  const std::filesystem::path artifacts =
      std::filesystem::path(GLEANER_BINARY).parent_path() / "artifacts";
  std::filesystem::create_directories(artifacts);
  const auto screenshot = [&](const std::string& page, const std::string& png) {
    std::filesystem::remove(png);
    return std::system(("timeout 120 " + chromium + flags +
                        "--window-size=1280,1800 --screenshot=" + png + " file://" + page +
                        " >/dev/null 2>&1")
                           .c_str());
  };
  const std::string png = (artifacts / "report.png").string();
  ASSERT_EQ(screenshot(out + "/report.html", png), 0);
  const std::string blank_png = (dir.path() / "blank.png").string();
  ASSERT_EQ(screenshot(dir.Write("blank.html", "<html><body></body></html>"), blank_png), 0);
  ASSERT_TRUE(std::filesystem::exists(png));
  EXPECT_EQ(testing::Slurp(png).substr(1, 3), "PNG");
  EXPECT_GT(std::filesystem::file_size(png), 3 * std::filesystem::file_size(blank_png) / 2)
      << "the report's screenshot looks like an empty page";
}

}  // namespace
}  // namespace gleaner
