// The simulator's reports in a real browser: headless Chromium opens
// report.html from disk (no network), renders its charts, and leaves a
// screenshot beside the test binaries (artifacts/report.png for a replay,
// artifacts/cross_cluster_report.png for the cross-cluster study,
// artifacts/site_report.png for `gleaner report`). Skipped
// where Chromium is not installed (scripts/quickstart.sh test installs it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/clock.h"
#include "store/sqlite_store.h"
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

// Opens `report` in headless Chromium: the DOM it builds holds at least
// `charts` SVG charts, and its screenshot, kept as artifacts/`png`, is
// more than an empty page's taken the same way.
void ExpectChartsRendered(const std::string& chromium, const testing::TempDir& dir,
                          const std::string& report, size_t charts, const std::string& png_name) {
  const std::string flags =
      " --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
      " --user-data-dir=" +
      (dir.path() / "profile").string() + " ";
  const std::string dom_file = (dir.path() / "dom.html").string();
  ASSERT_EQ(std::system(("timeout 120 " + chromium + flags + "--dump-dom file://" + report + " >" +
                         dom_file + " 2>/dev/null")
                            .c_str()),
            0);
  const std::string dom = testing::Slurp(dom_file);
  EXPECT_THAT(dom, HasSubstr("<svg"));
  size_t found = 0;
  for (size_t at = dom.find("<svg"); at != std::string::npos; at = dom.find("<svg", at + 1)) {
    ++found;
  }
  EXPECT_GE(found, charts);

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
  const std::string png = (artifacts / png_name).string();
  ASSERT_EQ(screenshot(report, png), 0);
  const std::string blank_png = (dir.path() / "blank.png").string();
  ASSERT_EQ(screenshot(dir.Write("blank.html", "<html><body></body></html>"), blank_png), 0);
  ASSERT_TRUE(std::filesystem::exists(png));
  EXPECT_EQ(testing::Slurp(png).substr(1, 3), "PNG");
  EXPECT_GT(std::filesystem::file_size(png), 3 * std::filesystem::file_size(blank_png) / 2)
      << "the report's screenshot looks like an empty page";
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
  // Utilization, queue length and completion-time charts.
  ExpectChartsRendered(chromium, dir, out + "/report.html", 3, "report.png");
}

TEST(ReportBrowserTest, ChromiumRendersTheCrossClusterReport) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "no Chromium here: apt-get install chromium";
  testing::TempDir dir;
  // Three VCs over six hours: one queues while the others idle, in turns.
  const std::string header =
      "time,total_gpu_num,running_gpu_num,pending_gpu_num,idle_gpu_num,running_job_num,"
      "pending_job_num,pending_gpu_num_noless_8,pending_gpu_num_less_8\n";
  std::string vcs[3] = {header, header, header};
  for (int minute = 0; minute < 360; ++minute) {
    char time[32];
    std::snprintf(time, sizeof time, "2020-05-01 %02d:%02d:00", minute / 60, minute % 60);
    for (int v = 0; v < 3; ++v) {
      const bool queues = (minute / 120) % 3 == v;
      const int pending = queues ? 4 + minute % 7 : 0;
      const int idle = queues ? 0 : 2 + (minute + 3 * v) % 6;
      vcs[v] += std::string(time) + ",16," + std::to_string(16 - idle) + "," +
                std::to_string(pending) + "," + std::to_string(idle) + ",3," +
                std::to_string(pending > 0 ? 1 : 0) + ",0," + std::to_string(pending) + "\n";
    }
  }
  for (int v = 0; v < 3; ++v) dir.Write("helios/vc" + std::to_string(v) + ".csv", vcs[v]);
  const std::string out = (dir.path() / "out").string();
  auto cross = testing::Gleaner("sim cross-cluster --helios " + (dir.path() / "helios").string() +
                                " --out " + out);
  ASSERT_EQ(cross.rc, 0) << cross.err;
  // Pending vs lendable over time, and the per-VC bars.
  ExpectChartsRendered(chromium, dir, out + "/report.html", 2, "cross_cluster_report.png");
}

TEST(ReportBrowserTest, ChromiumRendersTheHarvestReport) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "no Chromium here: apt-get install chromium";
  testing::TempDir dir;
  // One VC of 16 GPUs over twelve hours whose owner swings between 4 and 14
  // busy GPUs.
  std::string vc =
      "time,total_gpu_num,running_gpu_num,pending_gpu_num,idle_gpu_num,running_job_num,"
      "pending_job_num,pending_gpu_num_noless_8,pending_gpu_num_less_8\n";
  for (int minute = 0; minute < 720; ++minute) {
    char time[32];
    std::snprintf(time, sizeof time, "2020-05-01 %02d:%02d:00", minute / 60, minute % 60);
    const int busy = 4 + (minute / 40) % 11;
    vc += std::string(time) + ",16," + std::to_string(busy) + ",0," + std::to_string(16 - busy) +
          ",2,0,0,0\n";
  }
  dir.Write("vc.csv", vc);
  const std::string out = (dir.path() / "out").string();
  auto harvest = testing::Gleaner("sim harvest --helios " + (dir.path() / "vc.csv").string() +
                                  " --out " + out);
  ASSERT_EQ(harvest.rc, 0) << harvest.err;
  // Idle against harvested, jobs waiting, where the GPU-hours went, and the
  // completion-time CDF.
  ExpectChartsRendered(chromium, dir, out + "/report.html", 4, "harvest_report.png");
}

// `gleaner report` on a store holding the last hour of one GPU (its owner
// busy for the first half, then quiet) and a job that ran on it.
TEST(ReportBrowserTest, ChromiumRendersTheSiteReport) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "Chromium is not installed";
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  std::filesystem::create_directory(data);
  const core::TimePoint start = core::RealClock().Now() - core::Seconds(3600);
  {
    auto store = store::SqliteStore::Open(data + "/gleaner.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store::GpuRecord g;
    g.uuid = core::GpuUuid("GPU-0");
    g.host = "gpu-a";
    g.name = "NVIDIA H100 80GB HBM3";
    g.first_seen = g.last_seen = start;
    ASSERT_TRUE((*store)->SaveGpus({g}).ok());
    std::vector<observe::MinuteRollup> minutes;
    for (int m = 0; m < 59; ++m) {
      observe::MinuteRollup r;
      r.uuid = g.uuid;
      r.minute = start + core::Seconds(60 * m);
      r.samples = 60;
      r.observed = core::Seconds(60);
      const bool busy = m < 30;
      r.utilization_mean_pct = r.utilization_min_pct = r.utilization_max_pct = busy ? 90 : 0;
      r.state = busy ? observe::GpuState::kBusy : observe::GpuState::kIdle;
      if (busy) {
        r.users = {"alice"};
        r.busy = r.observed;
      } else {
        r.idle = r.observed;
      }
      minutes.push_back(r);
    }
    ASSERT_TRUE((*store)->AddRollups(minutes).ok());
    sched::JobSpec spec;
    spec.command = {"train"};
    spec.expected_runtime = core::Seconds(900);
    ASSERT_TRUE((*store)->Submit("bob", 1001, spec, start + core::Seconds(600)).ok());
  }
  const std::string page = (dir.path() / "report.html").string();
  const auto wrote = testing::Gleaner("report --data-dir " + data + " --since 2h --out " + page);
  ASSERT_EQ(wrote.rc, 0) << wrote.err;
  EXPECT_THAT(wrote.out, HasSubstr("wrote " + page + ": 1.0 GPU-hours observed"));
  const std::string html = testing::Slurp(page);
  EXPECT_THAT(html, HasSubstr("<title>gleaner report: gpu-a</title>"));
  EXPECT_THAT(html, HasSubstr("GPUs priced as H100-80GB"));
  ExpectChartsRendered(chromium, dir, page, 4, "site_report.png");
}

}  // namespace
}  // namespace gleaner
