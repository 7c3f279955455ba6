// The one reader of secrets kept in files (the cluster's secret, a join
// token, the store's URI): opened once, judged by what was opened.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "daemon/secrets.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using ::testing::HasSubstr;

class SecretFileTest : public ::testing::Test {
 protected:
  std::string Secret(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_.Write(name, text);
    chmod(path.c_str(), mode);
    return path;
  }
  testing::TempDir dir_;
};

TEST_F(SecretFileTest, AnOwnersFileIsReadTrimmed) {
  auto secret = daemon::ReadSecretFile(Secret("s", "  gjt_abc\n\n", 0600), "join token");
  ASSERT_TRUE(secret.ok()) << secret.status().message();
  EXPECT_EQ(*secret, "gjt_abc");
  EXPECT_TRUE(daemon::ReadSecretFile(Secret("r", "x", 0400), "join token").ok());
}

TEST_F(SecretFileTest, AFileOthersMayReadOrWriteIsRefused) {
  // Writable by its group: anyone in it could plant the cluster's secret.
  for (mode_t mode : {0644u, 0640u, 0620u, 0602u, 0610u}) {
    auto secret = daemon::ReadSecretFile(Secret("s", "secret", mode), "cluster secret");
    ASSERT_FALSE(secret.ok()) << std::oct << mode;
    EXPECT_THAT(secret.status().message(), HasSubstr("chmod 600")) << std::oct << mode;
  }
}

TEST_F(SecretFileTest, ALinkIsRefusedNamingTheLink) {
  const std::string target = Secret("real", "secret", 0600);
  const std::string link = (dir_.path() / "link").string();
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  auto secret = daemon::ReadSecretFile(link, "cluster secret");
  ASSERT_FALSE(secret.ok());
  EXPECT_THAT(secret.status().message(), HasSubstr(link + " is a symbolic link"));
}

TEST_F(SecretFileTest, AFifoIsRefusedNotWaitedOn) {
  const std::string fifo = (dir_.path() / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Nobody writes to it: a reader that waits would wait for ever.
  std::promise<core::Result<std::string>> read;
  std::future<core::Result<std::string>> done = read.get_future();
  std::thread([&read, fifo] {
    read.set_value(daemon::ReadSecretFile(fifo, "join token"));
  }).detach();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the reader blocked on a FIFO";
  const core::Result<std::string> secret = done.get();
  ASSERT_FALSE(secret.ok());
  EXPECT_THAT(secret.status().message(), HasSubstr("not a regular file"));
}

TEST_F(SecretFileTest, AFileLargerThanASecretIsRefused) {
  const std::string big(static_cast<size_t>(daemon::kMaxSecretBytes) + 1, 'a');
  auto secret = daemon::ReadSecretFile(Secret("big", big, 0600), "store file");
  ASSERT_FALSE(secret.ok());
  EXPECT_THAT(secret.status().message(), HasSubstr("larger than a secret"));
}

TEST_F(SecretFileTest, EveryDaemonSecretGoesThroughIt) {
  const std::string shared = Secret("cluster.secret", std::string(64, 'f'), 0620);
  EXPECT_THAT(daemon::ReadJoinSecret(shared).status().message(), HasSubstr("chmod 600"));
  const std::string token = Secret("join.token", "gjt_abc", 0620);
  EXPECT_THAT(daemon::ReadJoinToken(token).status().message(), HasSubstr("chmod 600"));
  const std::string store = Secret("store", "postgresql://db/gleaner", 0620);
  EXPECT_THAT(daemon::StoreUri("", store).status().message(), HasSubstr("chmod 600"));
}

}  // namespace
}  // namespace gleaner
