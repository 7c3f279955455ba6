// gleaner under systemd, as far as a machine without a running systemd can
// show it: the units pass systemd-analyze verify, the daemons speak the
// Type=notify protocol to a socket the test listens on, and their log lines
// carry journald priorities when their output is the journal's stream.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/service_notify.h"
#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using ::testing::HasSubstr;
using testing::Outcome;

TEST(SystemdUnitTest, UnitsPassSystemdAnalyzeVerify) {
  if (std::system("command -v systemd-analyze >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "systemd-analyze is not installed (apt-get install systemd)";
  }
  testing::TempDir dir;
  std::string units;
  for (const char* unit : {"gleaner.service", "gleaner-agent.service", "gleaner-server.service"}) {
    std::string text = testing::Slurp(std::string(GLEANER_SOURCE_DIR) + "/deploy/systemd/" + unit);
    ASSERT_THAT(text, HasSubstr("ExecStart=/usr/bin/gleaner "));
    // verify checks that the program exists: the one just built stands in.
    text.replace(text.find("/usr/bin/gleaner "), 16, GLEANER_BINARY);
    units += " " + dir.Write(unit, text);
    if (std::string(unit) != "gleaner-server.service") {
      EXPECT_THAT(text, HasSubstr("Delegate=yes")) << unit;
      EXPECT_THAT(text, HasSubstr("KillMode=process")) << unit;  // restarts spare jobs
    }
    EXPECT_THAT(text, HasSubstr("Type=notify")) << unit;
    EXPECT_THAT(text, HasSubstr("WatchdogSec=")) << unit;
  }
  const Outcome verify = testing::RunBinary("systemd-analyze", "verify --man=no" + units);
  EXPECT_EQ(verify.rc, 0) << verify.out << verify.err;
  EXPECT_EQ(verify.err, "") << "every warning is a defect";
}

// A datagram socket standing in for systemd's notify socket.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval timeout{0, 200'000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~NotifySocket() { close(fd_); }
  // Every message until one holds `last`, or `within` passes.
  std::vector<std::string> ReadUntil(const std::string& last, std::chrono::seconds within) {
    std::vector<std::string> messages;
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      messages.emplace_back(buf, static_cast<size_t>(n));
      if (messages.back().find(last) != std::string::npos) break;
    }
    return messages;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

TEST(SystemdNotifyTest, UpSaysReadyPingsTheWatchdogAndSaysStopping) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string socket = (dir.path() / "notify").string();
  NotifySocket manager(socket);
  const std::string config = dir.Write("g.toml", "[sampling]\ninterval_s = 0.2\n");
  ASSERT_EQ(std::system(("NOTIFY_SOCKET=" + socket + " WATCHDOG_USEC=400000 " + GLEANER_BINARY +
                         " up --fake demo --data-dir " + data + " --config " + config +
                         " --for 3 >" + (dir.path() / "up.log").string() + " 2>&1 &")
                            .c_str()),
            0);
  const std::vector<std::string> messages =
      manager.ReadUntil("STOPPING=1", std::chrono::seconds(30));
  ASSERT_FALSE(messages.empty()) << testing::Slurp(dir.path() / "up.log");
  EXPECT_EQ(messages.front(), "READY=1\nSTATUS=harvesting fake:demo");
  int pings = 0;
  for (const std::string& m : messages) pings += m == "WATCHDOG=1" ? 1 : 0;
  // Every 0.2 s at most, for 3 s: a ping each half interval (0.2 s).
  EXPECT_GE(pings, 5);
  EXPECT_EQ(messages.back(), "STOPPING=1");
}

TEST(SystemdNotifyTest, ASamplingIntervalTheWatchdogWouldKillIsRefused) {
  testing::TempDir dir;
  const std::string config = dir.Write("g.toml", "[sampling]\ninterval_s = 1\n");
  const Outcome r = testing::Gleaner("up --fake demo --data-dir " + (dir.path() / "d").string() +
                                         " --config " + config + " --for 1",
                                     "WATCHDOG_USEC=1000000");
  EXPECT_EQ(r.rc, 4);
  EXPECT_THAT(r.err, HasSubstr("is longer than half the service's watchdog"));
}

TEST(SystemdNotifyTest, LinesToTheJournalCarryTheirPriority) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string out = dir.Write("journal", "");
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  const std::string stream = std::to_string(static_cast<unsigned long long>(st.st_dev)) + ":" +
                             std::to_string(static_cast<unsigned long long>(st.st_ino));
  // TCP beyond loopback without TLS: a warning.
  const int port = testing::FreePort();
  const int rc = std::system(
      ("JOURNAL_STREAM=" + stream + " " + GLEANER_BINARY + " up --fake demo --data-dir " + data +
       " --listen 0.0.0.0:" + std::to_string(port) + " --for 1 >>" + out + " 2>&1")
          .c_str());
  ASSERT_EQ(rc, 0) << testing::Slurp(out);
  const std::string log = testing::Slurp(out);
  EXPECT_THAT(log, HasSubstr("\n<4>warning: the HTTP API listens beyond this host without TLS"));
  EXPECT_THAT(log, HasSubstr("\n<6>stopped\n"));
  // journald keeps the time: no line starts with one of its own.
  EXPECT_THAT(log, ::testing::Not(::testing::ContainsRegex("(^|\n)20[0-9][0-9]-")));
}

TEST(JournalPriorityTest, ErrorsWarningsAndTheRest) {
  EXPECT_EQ(core::JournalPriority("error: NVML went away"), 3);
  EXPECT_EQ(core::JournalPriority("warning: no TLS on 0.0.0.0:7380"), 4);
  EXPECT_EQ(core::JournalPriority("cannot replace /x: Permission denied"), 4);
  EXPECT_EQ(core::JournalPriority("restoring GPU 3 failed: busy; tried again each pass"), 4);
  EXPECT_EQ(core::JournalPriority("job 4 started as alice"), 6);
}

}  // namespace
}  // namespace gleaner
