// The coordinators' leadership on a real store's lease (SQLite's flock):
// one leads, another stands by and says so once, and takes over when the
// leader goes.
#include "daemon/coordinator_daemon.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "testing/temp_dir.h"

namespace gleaner::daemon {
namespace {

class LeadershipTest : public ::testing::Test {
 protected:
  std::unique_ptr<Leadership> Server(const cluster::Log& log) {
    auto lease = store::OpenLeaderLease(db_);
    EXPECT_TRUE(lease.ok()) << lease.status().message();
    return std::make_unique<Leadership>(std::move(lease).value(), db_, clock_,
                                        cluster::CoordinatorOptions{}, log);
  }
  static int Saying(const std::vector<std::string>& lines, const std::string& what) {
    return static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.find(what) != std::string::npos;
    }));
  }

  testing::TempDir dir_;
  const std::string db_ = (dir_.path() / "gleaner.db").string();
  core::ManualClock clock_;
  std::vector<std::string> said_a_, said_b_;
  const cluster::Log log_a_ = [this](const std::string& l) { said_a_.push_back(l); };
  const cluster::Log log_b_ = [this](const std::string& l) { said_b_.push_back(l); };
};

TEST_F(LeadershipTest, OneLeadsAnotherStandsByAndTakesOverWhenTheLeaderGoes) {
  std::unique_ptr<Leadership> a = Server(log_a_);
  std::unique_ptr<Leadership> b = Server(log_b_);
  EXPECT_EQ(a->leader(), nullptr);  // nothing before the first step

  a->Step();
  ASSERT_NE(a->leader(), nullptr);
  EXPECT_EQ(Saying(said_a_, "leading"), 1);
  b->Step();
  b->Step();
  EXPECT_EQ(b->leader(), nullptr);
  EXPECT_EQ(Saying(said_b_, "standing by"), 1) << "said once, not at every step";

  // The leader keeps its coordinator across steps: not started again.
  const std::shared_ptr<cluster::Coordinator> first = a->leader();
  a->Step();
  EXPECT_EQ(a->leader(), first);
  EXPECT_EQ(Saying(said_a_, "leading"), 1);

  a.reset();  // the leader dies: its lease goes with it
  b->Step();
  EXPECT_NE(b->leader(), nullptr);
  EXPECT_EQ(Saying(said_b_, "leading"), 1);
}

}  // namespace
}  // namespace gleaner::daemon
