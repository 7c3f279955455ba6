// Every JobOrdering must keep these promises; what distinguishes the
// multifactor ordering is tested below the typed suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>

#include "sched/fair_share.h"
#include "sched/ordering.h"
#include "sched_test_util.h"

namespace gleaner::sched {
namespace {

const core::TimePoint kNow = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

struct Pending {
  JobRequest job;
  core::TimePoint submitted_at = kNow;
  double project_fs = 1;
};

Pending Job(JobId id, PriorityClass c, int priority = 0, int waited_s = 0) {
  Pending p{testing::MakeJob(id, 1), kNow - core::Seconds(waited_s), 1};
  p.job.priority_class = c;
  p.job.priority = priority;
  return p;
}

template <typename Ordering>
class OrderingConformanceTest : public ::testing::Test {
 protected:
  OrderKey Key(const Pending& p) {
    return ordering_.Key({&p.job, p.submitted_at, kNow, p.project_fs, 1});
  }
  // The ids in queue order.
  std::vector<JobId> Order(std::vector<Pending> jobs) {
    std::sort(jobs.begin(), jobs.end(),
              [&](const Pending& a, const Pending& b) { return Key(a) < Key(b); });
    std::vector<JobId> ids;
    for (const Pending& p : jobs) ids.push_back(p.job.id);
    return ids;
  }
  Ordering ordering_;
};

using Orderings = ::testing::Types<PriorityFifoOrdering, MultifactorOrdering>;
TYPED_TEST_SUITE(OrderingConformanceTest, Orderings);

TYPED_TEST(OrderingConformanceTest, TheClassComesBeforeEverythingElse) {
  const auto order = this->Order({Job(1, PriorityClass::kOpportunistic, 1000, 10 * 86400),
                                  Job(2, PriorityClass::kNormal, -1000, 0),
                                  Job(3, PriorityClass::kCritical, -1000, 0)});
  EXPECT_EQ(order, (std::vector<JobId>{3, 2, 1}));
}

TYPED_TEST(OrderingConformanceTest, HigherPriorityFirstWithinAClass) {
  EXPECT_EQ(this->Order({Job(1, PriorityClass::kNormal, 5), Job(2, PriorityClass::kNormal, 50)}),
            (std::vector<JobId>{2, 1}));
}

TYPED_TEST(OrderingConformanceTest, TiesGoToTheOlderJobThenTheLowerId) {
  EXPECT_EQ(
      this->Order({Job(1, PriorityClass::kNormal, 0, 10), Job(2, PriorityClass::kNormal, 0, 20),
                   Job(4, PriorityClass::kNormal, 0, 5), Job(3, PriorityClass::kNormal, 0, 5)}),
      (std::vector<JobId>{2, 1, 3, 4}));
}

TYPED_TEST(OrderingConformanceTest, KeysCarryTheJobIdSoTheOrderIsTotal) {
  const Pending a = Job(7, PriorityClass::kNormal);
  EXPECT_EQ(this->Key(a).id, 7);
  const Pending b = Job(8, PriorityClass::kNormal);
  EXPECT_TRUE(this->Key(a) < this->Key(b) || this->Key(b) < this->Key(a));
}

// PendingQueue keeps each group (one class, priority, project and user) as
// a FIFO: at one time and with the same factors, keys follow submit times.
TYPED_TEST(OrderingConformanceTest, OneGroupAtOneTimeIsInSubmitOrder) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const double project_fs = static_cast<double>(rng() % 101) / 100.0;
    const double user_fs = static_cast<double>(rng() % 101) / 100.0;
    const auto cls = static_cast<PriorityClass>(rng() % 3);
    const int priority = static_cast<int>(rng() % 2001) - 1000;
    std::vector<Pending> jobs;
    for (JobId id = 1; id <= 40; ++id) {
      // Waits from nothing to twice a day, some alike to the microsecond.
      Pending p = Job(id, cls, priority, static_cast<int>(rng() % 172800 / (1 + rng() % 1000)));
      p.project_fs = project_fs;
      jobs.push_back(p);
    }
    const auto key = [&](const Pending& p) {
      return this->ordering_.Key({&p.job, p.submitted_at, kNow, p.project_fs, user_fs});
    };
    std::sort(jobs.begin(), jobs.end(),
              [&](const Pending& a, const Pending& b) { return key(a) < key(b); });
    for (size_t i = 1; i < jobs.size(); ++i) {
      const Pending& a = jobs[i - 1];
      const Pending& b = jobs[i];
      EXPECT_TRUE(std::tie(a.submitted_at, a.job.id) < std::tie(b.submitted_at, b.job.id))
          << "job " << a.job.id << " sorts before job " << b.job.id << " though submitted later";
    }
  }
}

// ---- the multifactor ordering -------------------------------------------

TEST(MultifactorOrderingTest, AgePassesPriorityBeforeStarvation) {
  MultifactorOrdering multi;
  PriorityFifoOrdering fifo;
  const Pending old_low = Job(1, PriorityClass::kNormal, -500, 2 * 86400);
  const Pending fresh_high = Job(2, PriorityClass::kNormal, 500, 0);
  const auto key = [](const JobOrdering& o, const Pending& p) {
    return o.Key({&p.job, p.submitted_at, kNow, 1, 1});
  };
  EXPECT_TRUE(key(multi, old_low) < key(multi, fresh_high));
  EXPECT_TRUE(key(fifo, fresh_high) < key(fifo, old_low));
}

TEST(MultifactorOrderingTest, AProjectThatUsedMoreWaitsBehindOneThatUsedLess) {
  FairShareLedger ledger(core::Seconds(3600));
  ledger.Advance(kNow);
  ledger.Charge("heavy", 9000);
  ledger.Charge("light", 1000);
  Pending heavy = Job(1, PriorityClass::kNormal, 0, 60);
  Pending light = Job(2, PriorityClass::kNormal, 0, 0);
  MultifactorOrdering multi;
  const OrderKey h = multi.Key({&heavy.job, heavy.submitted_at, kNow, ledger.Factor("heavy"), 1});
  const OrderKey l = multi.Key({&light.job, light.submitted_at, kNow, ledger.Factor("light"), 1});
  EXPECT_TRUE(l < h);
}

// ---- fair share ---------------------------------------------------------

TEST(FairShareLedgerTest, UsageHalvesEveryHalfLife) {
  FairShareLedger ledger(core::Seconds(100));
  ledger.Advance(kNow);
  ledger.Charge("p", 800);
  ledger.Advance(kNow + core::Seconds(100));
  EXPECT_DOUBLE_EQ(ledger.Usage("p"), 400);
  ledger.Advance(kNow + core::Seconds(300));
  EXPECT_DOUBLE_EQ(ledger.Usage("p"), 100);
  ledger.Advance(kNow + core::Seconds(200));  // time never goes back
  EXPECT_DOUBLE_EQ(ledger.Usage("p"), 100);
}

TEST(FairShareLedgerTest, TheFactorWeighsUsageAgainstTheWeight) {
  FairShareLedger ledger(core::Seconds(100));
  EXPECT_DOUBLE_EQ(ledger.Factor("anyone"), 1);  // nobody used anything
  ledger.SetWeight("big", 3);
  ledger.Touch("small");
  ledger.Advance(kNow);
  ledger.Charge("big", 750);
  ledger.Charge("small", 250);
  // Each used exactly its share (3:1): both at 0.5.
  EXPECT_DOUBLE_EQ(ledger.Factor("big"), 0.5);
  EXPECT_DOUBLE_EQ(ledger.Factor("small"), 0.5);
  ledger.Charge("small", 1000);
  EXPECT_LT(ledger.Factor("small"), ledger.Factor("big"));
  EXPECT_DOUBLE_EQ(ledger.Factor("newcomer"), 1);
}

TEST(FairShareLedgerTest, AHandleChargesItsAccountAsTheNameDoes) {
  FairShareLedger by_name(core::Seconds(100)), by_handle(core::Seconds(100));
  by_name.Advance(kNow);
  by_handle.Advance(kNow);
  const FairShareLedger::Handle a = by_handle.HandleOf("a");
  EXPECT_TRUE(a);
  EXPECT_FALSE(FairShareLedger::Handle{});
  // Accounts made after the handle do not move it.
  for (int i = 0; i < 100; ++i) by_handle.Touch("u" + std::to_string(i));
  for (int i = 0; i < 100; ++i) by_name.Touch("u" + std::to_string(i));
  by_name.Charge("a", 300);
  by_handle.Charge(a, 300);
  by_name.Charge("b", 100);
  by_handle.Charge(by_handle.HandleOf("b"), 100);
  EXPECT_DOUBLE_EQ(by_handle.Usage("a"), 300);
  EXPECT_DOUBLE_EQ(by_handle.Factor("a"), by_name.Factor("a"));
  EXPECT_DOUBLE_EQ(by_handle.Factor("b"), by_name.Factor("b"));
  EXPECT_DOUBLE_EQ(by_handle.Factor("u7"), by_name.Factor("u7"));
}

}  // namespace
}  // namespace gleaner::sched
