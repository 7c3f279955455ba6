// Root's gleaner at the standard paths: state in /var/lib/gleaner, config in
// /etc/gleaner/gleaner.toml, and a user's commands find it without
// --data-dir. Needs root, and a host where gleaner is not installed (the
// test makes those paths and removes them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"
#include "testing/throwaway_user.h"

namespace gleaner {
namespace {

using ::testing::HasSubstr;
using testing::Outcome;

// Removes a path the test made, when it goes out of scope.
struct RemoveOnExit {
  std::filesystem::path path;
  ~RemoveOnExit() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

TEST(StandardPathsTest, RootsDaemonIsFoundByUsersAndReadsEtcGleaner) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  if (std::filesystem::exists("/var/lib/gleaner") || std::filesystem::exists("/etc/gleaner")) {
    GTEST_SKIP() << "gleaner is installed here: its paths are left alone";
  }
  testing::ThrowawayUser account("glpath");
  ASSERT_TRUE(account.ok());
  const RemoveOnExit state{"/var/lib/gleaner"};
  const RemoveOnExit etc{"/etc/gleaner"};
  std::filesystem::create_directory("/etc/gleaner");
  std::ofstream("/etc/gleaner/gleaner.toml") << "[idle]\nidle_after_s = 1\n[sampling]\n"
                                                "interval_s = 0.2\n";
  // Root's config is found with no --config.
  const Outcome doctor = testing::Gleaner("doctor --json --fake demo --listen none");
  EXPECT_THAT(doctor.out, HasSubstr("/etc/gleaner/gleaner.toml reads well")) << doctor.out;

  testing::TempDir dir;
  const std::string pid_file = (dir.path() / "up.pid").string();
  ASSERT_EQ(std::system((std::string(GLEANER_BINARY) + " up --fake demo --for 30 >" +
                         (dir.path() / "up.log").string() + " 2>&1 & echo $! >" + pid_file)
                            .c_str()),
            0);
  const testing::KillOnExit daemon(pid_file);
  for (int i = 0; i < 400 && !std::filesystem::exists("/var/lib/gleaner/gleaner.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  // A user with no gleaner of their own: their commands reach root's.
  const testing::SharedGleaner shared;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  const std::string as_user =
      "cd /tmp && runuser -u " + account.name() + " -- env HOME=" + dir.path().string();
  const Outcome submitted = testing::RunBinary(shared.path(), "submit -- sleep 30", as_user);
  ASSERT_EQ(submitted.rc, 0) << submitted.err << testing::Slurp(dir.path() / "up.log");
  EXPECT_EQ(submitted.out, "submitted job 1\n");
  const Outcome queue = testing::RunBinary(shared.path(), "queue --json", as_user);
  ASSERT_EQ(queue.rc, 0) << queue.err;
  EXPECT_EQ(nlohmann::json::parse(queue.out)["jobs"][0]["user"], account.name());
  testing::Gleaner("cancel 1");
}

// Before: every command a user ran on another user's private (0700) data
// dir aborted (exit 134, an uncaught filesystem_error), and doctor called
// the directory ok.
TEST(StandardPathsTest, AUserFacingAPrivateDataDirIsToldWhatToDo) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  testing::ThrowawayUser account("glpriv");
  ASSERT_TRUE(account.ok());
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  std::filesystem::create_directory(data);
  std::filesystem::permissions(data, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace);
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  const testing::SharedGleaner shared;
  const std::string as_user = "cd /tmp && runuser -u " + account.name() + " --";
  for (const char* command : {"queue", "gpus", "show 1", "events", "profile"}) {
    const Outcome r =
        testing::RunBinary(shared.path(), "--data-dir " + data + " " + command, as_user);
    EXPECT_NE(r.rc, 134) << command << " aborted: " << r.err;
    EXPECT_NE(r.rc, 0) << command;
    EXPECT_THAT(r.err, HasSubstr("cannot look in " + data + ": it is private to its owner"))
        << command;
  }
  const Outcome doctor =
      testing::RunBinary(shared.path(), "doctor --fake demo --data-dir " + data, as_user);
  EXPECT_THAT(doctor.out, HasSubstr("FAIL  data-dir  cannot look in " + data)) << doctor.out;
}

}  // namespace
}  // namespace gleaner
