// gleaner doctor on a sound setup and on broken ones: each problem is named
// with how to fix it, through the real NVML loader and the fake driver.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "net/http_date.h"
#include "testing/gleaner_up.h"
#include "testing/http_receiver.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using nlohmann::json;
using testing::Gleaner;
using ::testing::HasSubstr;
using testing::Outcome;

const std::string kFakeDriver =
    std::string("LD_LIBRARY_PATH=") + GLEANER_FAKE_NVML_DIR + "/modern GLEANER_FAKE_NVML_SCENARIO=";

struct Report {
  int rc;
  std::map<std::string, std::pair<std::string, std::string>> checks;  // status, detail
};

// `global`: options before the subcommand.
Report Doctor(const std::string& args, const std::string& scenario = "demo",
              const std::string& global = "") {
  const Outcome r = Gleaner(global + " doctor --json " + args, kFakeDriver + scenario);
  Report report{r.rc, {}};
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["ok"], r.rc == 0);
  for (const json& c : doc["checks"]) {
    report.checks[c["name"]] = {c["status"].get<std::string>(), c["detail"].get<std::string>()};
  }
  return report;
}

TEST(DoctorBinaryTest, ASoundSetupPasses) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  std::filesystem::create_directory(data);
  const std::string port = std::to_string(testing::FreePort());
  const Report r = Doctor("--data-dir " + data + " --listen 127.0.0.1:" + port);
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.checks.at("driver").first, "ok") << r.checks.at("driver").second;
  EXPECT_THAT(r.checks.at("driver").second, HasSubstr("NVIDIA driver 550.54.15"));
  EXPECT_EQ(r.checks.at("gpus").second, "every GPU healthy");
  EXPECT_EQ(r.checks.at("data-dir").first, "ok");
  EXPECT_EQ(r.checks.at("config").first, "ok");
  EXPECT_EQ(r.checks.at("listen").first, "ok");
  EXPECT_EQ(r.checks.at("store").first, "skip");
  EXPECT_THAT(Gleaner("doctor --data-dir " + data + " --listen none", kFakeDriver + "demo").out,
              HasSubstr("nothing failed\n"));
}

TEST(DoctorBinaryTest, TheStoreAndAClockAwayFromTheCoordinatorsAreNamed) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  std::filesystem::create_directory(data);
  const std::string args = "--data-dir " + data + " --listen none";
  EXPECT_EQ(Doctor(args).checks.at("clock").first, "skip");

  // A real coordinator on this host: the same clock.
  const int port = testing::FreePort();
  const testing::KillOnExit up =
      testing::StartGleanerUp(dir, (dir.path() / "up").string(), port, 30);
  Report r = Doctor(args, "demo", "--server http://127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(r.checks.at("clock").first, "ok") << r.checks.at("clock").second;

  // The coordinator's store, read without a change; one not made yet; junk.
  const std::string db = (dir.path() / "up" / "gleaner.db").string();
  r = Doctor(args + " --store " + db);
  EXPECT_EQ(r.checks.at("store").first, "ok") << r.checks.at("store").second;
  EXPECT_THAT(r.checks.at("store").second, HasSubstr(db + " reached, schema version "));
  r = Doctor(args + " --store " + (dir.path() / "new.db").string());
  EXPECT_EQ(r.checks.at("store").first, "ok");
  EXPECT_THAT(r.checks.at("store").second, HasSubstr("does not exist yet"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "new.db"));
  r = Doctor(args + " --store " + dir.Write("junk.db", std::string(4096, 'x')));
  EXPECT_EQ(r.checks.at("store").first, "fail");
  EXPECT_THAT(r.checks.at("store").second, HasSubstr("cannot read"));

  // One five minutes behind, and one with no clock at all.
  const core::TimePoint behind =
      std::chrono::time_point_cast<core::Duration>(std::chrono::system_clock::now()) -
      core::Seconds(300);
  const testing::HttpReceiver skewed({401}, "Date: " + net::FormatHttpDate(behind) + "\r\n");
  r = Doctor(args, "demo", "--server " + skewed.url(""));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.checks.at("clock").first, "fail");
  EXPECT_THAT(r.checks.at("clock").second, HasSubstr("s behind this host's"));
  EXPECT_THAT(r.checks.at("clock").second, HasSubstr("timedatectl set-ntp true"));
  const testing::HttpReceiver dateless({200});
  r = Doctor(args, "demo", "--server " + dateless.url(""));
  EXPECT_EQ(r.checks.at("clock").first, "warn");
  EXPECT_THAT(r.checks.at("clock").second, HasSubstr("sent no Date"));
  r = Doctor(args, "demo", "--server http://127.0.0.1:" + std::to_string(testing::FreePort()));
  EXPECT_EQ(r.checks.at("clock").first, "fail");
}

TEST(DoctorBinaryTest, EachBrokenPieceIsNamedWithItsFix) {
  testing::TempDir dir;
  const std::string open_dir = (dir.path() / "open").string();
  std::filesystem::create_directory(open_dir);
  std::filesystem::permissions(open_dir, std::filesystem::perms::all);
  const Report open = Doctor("--data-dir " + open_dir + " --listen none");
  EXPECT_EQ(open.rc, 1);
  EXPECT_EQ(open.checks.at("data-dir").first, "fail");
  EXPECT_THAT(open.checks.at("data-dir").second, HasSubstr("can be written by others (mode 0777)"));
  EXPECT_THAT(open.checks.at("data-dir").second, HasSubstr("chmod go-w " + open_dir));

  const std::string data = (dir.path() / "state").string();
  std::filesystem::create_directory(data);
  dir.Write("state/gleaner.toml", "[idle]\nidle_after = 3\n");
  dir.Write("state/gleaner.db", "");
  std::filesystem::permissions(data + "/gleaner.db", std::filesystem::perms::owner_read |
                                                         std::filesystem::perms::owner_write |
                                                         std::filesystem::perms::others_read);
  // A port someone else holds.
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(holder, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  const Report broken = Doctor("--data-dir " + data + " --listen " + taken +
                               " --nvml-library /nonexistent/libnvidia-ml.so.1 --tls-cert " + data +
                               "/no.pem --tls-key " + data + "/no.key");
  close(holder);
  EXPECT_EQ(broken.rc, 1);
  EXPECT_EQ(broken.checks.at("driver").first, "fail");
  EXPECT_THAT(broken.checks.at("driver").second,
              HasSubstr("no NVIDIA driver found: cannot load /nonexistent/libnvidia-ml.so.1"));
  EXPECT_THAT(broken.checks.at("data-dir").second,
              HasSubstr("can be read by others (mode 0604): chmod 600"));
  EXPECT_EQ(broken.checks.at("config").first, "fail");
  EXPECT_THAT(broken.checks.at("config").second, HasSubstr("gleaner.toml:2"));
  EXPECT_THAT(broken.checks.at("listen").second, HasSubstr("another program holds it"));
  EXPECT_EQ(broken.checks.at("tls").first, "fail");
  EXPECT_THAT(broken.checks.at("tls").second, HasSubstr("no.pem"));
}

TEST(DoctorBinaryTest, AFaultyGpuIsAWarningThatNamesIt) {
  testing::TempDir dir;
  const std::string scenario = dir.Write("s.json", R"({"gpus": [
    {"name": "A", "memory_total_mib": 1000},
    {"name": "B", "memory_total_mib": 1000, "timeline": [{"at_s": 0, "xid": 79}]}]})");
  const Report r = Doctor("--data-dir " + (dir.path() / "d").string() + " --listen none", scenario);
  EXPECT_EQ(r.checks.at("gpus").first, "warn");
  EXPECT_THAT(r.checks.at("gpus").second, HasSubstr("GPU 1 faulty: the driver reported Xid 79"));
  EXPECT_EQ(r.checks.at("data-dir").first, "warn");  // not made yet
  EXPECT_EQ(r.rc, 0);
}

}  // namespace
}  // namespace gleaner
