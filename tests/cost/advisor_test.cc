#include "cost/advisor.h"

#include <gtest/gtest.h>

#include "cost/civil_date.h"

namespace gleaner::cost {
namespace {

// A tiny catalog; every expected number below is worked out by hand.
constexpr const char* kCatalog =
    "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,currency,"
    "source,date\n"
    "P,r1,od8,A100-80GB-SXM,8,on-demand,20,USD,s1,2026-01-01\n"
    "P,r1,od1,A100-80GB,1,on-demand,3,USD,s2,2026-01-01\n"
    "P,r1,sp8,A100-80GB-SXM,8,spot,8,USD,s3,2026-01-01\n"
    "Q,r2,od8q,A100-80GB,8,on-demand,144,CNY,s4,2026-01-01\n"
    "P,r1,res8,A100-80GB-SXM,8,reserved-1y,12,USD,s5,2026-01-01\n"
    "P,r1,res8,A100-80GB-SXM,8,on-demand,30,USD,s6,2025-01-01\n"
    "P,r1,res8,A100-80GB-SXM,8,on-demand,24,USD,s7,2026-02-01\n";

Catalog Tiny() {
  auto c = Catalog::Parse(kCatalog, "tiny.csv");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

AdviceRequest EightA100sForADay() {
  AdviceRequest r;
  r.gpu_model = "A100-80GB";
  r.gpu_count = 8;
  r.hours = 24;
  r.deadline_h = 48;
  r.today_days = *ParseIsoDate("2026-06-01");
  return r;
}

const AdviceOption* Find(const Advice& a, const std::string& kind) {
  for (const AdviceOption& o : a.options) {
    if (o.kind == kind) return &o;
  }
  return nullptr;
}

TEST(AdvisorTest, PricesEveryWayAndRecommendsSpot) {
  auto a = Advise(Tiny(), EightA100sForADay());
  ASSERT_TRUE(a.ok()) << a.status().message();
  // On-demand: od8 1 x 20 x 24 = 480; od1 8 x 3 x 24 = 576; od8q 144 CNY /
  // 7.2 = 20 USD/h -> 480 too, a tie kept by catalog order: od8.
  const AdviceOption* od = Find(*a, "on-demand");
  ASSERT_NE(od, nullptr);
  EXPECT_EQ(od->instance, "od8");
  EXPECT_NEAR(od->expected_cost, 480, 1e-9);
  EXPECT_EQ(od->meets_deadline, DeadlineVerdict::kYes);
  EXPECT_EQ(od->source, "s1");
  EXPECT_EQ(od->date, "2026-01-01");
  // Spot: 1 instance, wall 24.0421 h (spot_test) x 8 USD/h = 192.34.
  const AdviceOption* spot = Find(*a, "spot");
  ASSERT_NE(spot, nullptr);
  EXPECT_NEAR(spot->expected_cost, 192.337, 0.001);
  EXPECT_EQ(spot->meets_deadline, DeadlineVerdict::kYes);
  // Reserved: 12 x 24 = 288 for the job; break-even against the same
  // instance's on-demand price dated closest (2026-02-01: 24/h): 12/24 =
  // 50 %. Not eligible.
  const AdviceOption* res = Find(*a, "reserved-1y");
  ASSERT_NE(res, nullptr);
  EXPECT_NEAR(res->expected_cost, 288, 1e-9);
  EXPECT_FALSE(res->eligible);
  EXPECT_NE(res->arithmetic.back().find("1.5000 / 3.0000 (on-demand res8 of 2026-02-01"),
            std::string::npos)
      << res->arithmetic.back();
  EXPECT_NE(res->arithmetic.back().find("= 50.0 %"), std::string::npos) << res->arithmetic.back();
  // In-house: 8 x 24 = 192 GPU-h x 0.0553 = 10.62, timing unknown.
  const AdviceOption* home = Find(*a, "in-house");
  ASSERT_NE(home, nullptr);
  EXPECT_NEAR(home->expected_cost, 10.6176, 1e-9);
  EXPECT_EQ(home->meets_deadline, DeadlineVerdict::kUnknown);
  ASSERT_TRUE(a->recommended.has_value());
  EXPECT_EQ(a->options[*a->recommended].kind, "spot");
  EXPECT_FALSE(a->warnings.empty());  // in-house would be cheaper if idle time allows
}

TEST(AdvisorTest, ReservationWithoutItsOwnOnDemandPriceUsesTheCheapest) {
  auto c = Catalog::Parse(
      "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,"
      "currency,source,date\n"
      "P,r1,od8,A100-80GB,8,on-demand,20,USD,s1,2026-01-01\n"
      "P,r1,res8,A100-80GB,8,reserved-3y,10,USD,s2,2026-01-01\n",
      "t");
  ASSERT_TRUE(c.ok());
  auto a = Advise(*c, EightA100sForADay());
  ASSERT_TRUE(a.ok());
  // 10/8 = 1.25 over 20/8 = 2.5 per GPU-hour = 50 %.
  const AdviceOption* res = Find(*a, "reserved-3y");
  ASSERT_NE(res, nullptr);
  EXPECT_NE(res->arithmetic.back().find("(cheapest on-demand match, per GPU-hour) = 50.0 %"),
            std::string::npos)
      << res->arithmetic.back();
}

TEST(AdvisorTest, KnownIdleTimeMakesInHouseTheAnswer) {
  AdviceRequest r = EightA100sForADay();
  r.idle_gpu_hours_per_day = 96;  // 192 GPU-h / 96 per day = 2 days = 48 h <= 48 h
  auto a = Advise(Tiny(), r);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a->recommended.has_value());
  EXPECT_EQ(a->options[*a->recommended].kind, "in-house");
  EXPECT_NEAR(a->options[*a->recommended].expected_hours, 48, 1e-9);
  r.idle_gpu_hours_per_day = 95;  // 48.5 h > 48 h: spot again
  a = Advise(Tiny(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->options[*a->recommended].kind, "spot");
}

TEST(AdvisorTest, TightDeadlineRulesOutSpot) {
  AdviceRequest r = EightA100sForADay();
  r.deadline_h = 24;  // spot's expected 24.04 h misses it; on-demand's 24 h meets it
  auto a = Advise(Tiny(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Find(*a, "spot")->meets_deadline, DeadlineVerdict::kNo);
  EXPECT_EQ(a->options[*a->recommended].kind, "on-demand");
  EXPECT_NEAR(a->options[*a->recommended].expected_cost, 480, 1e-9);
}

TEST(AdvisorTest, SingleInstanceSkipsMultiInstanceRentals) {
  AdviceRequest r = EightA100sForADay();
  r.gpu_model = "A100-80GB";
  r.gpu_count = 2;  // od1 would be 2 x 3 x 24 = 144, cheaper than od8's 20 x 24 = 480
  auto a = Advise(Tiny(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Find(*a, "on-demand")->instance, "od1");
  r.single_instance = true;
  a = Advise(Tiny(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(Find(*a, "on-demand")->instance, "od8");
  EXPECT_NEAR(Find(*a, "on-demand")->expected_cost, 480, 1e-9);
}

TEST(AdvisorTest, CnyOutputConvertsAtTheRate) {
  AdviceRequest r = EightA100sForADay();
  r.currency = Currency::kCny;
  r.region = "r2";
  auto a = Advise(Tiny(), r);
  ASSERT_TRUE(a.ok());
  // 144 CNY x 24 h = 3456 CNY, in the price's own currency.
  EXPECT_NEAR(Find(*a, "on-demand")->expected_cost, 3456, 1e-9);
  // In-house: 10.6176 USD x 7.2 = 76.447 CNY.
  EXPECT_NEAR(Find(*a, "in-house")->expected_cost, 76.44672, 1e-6);
}

TEST(AdvisorTest, StalePricesAreWarnedAndFreshOnesPreferred) {
  AdviceRequest r = EightA100sForADay();
  r.today_days = *ParseIsoDate("2027-06-01");  // every tiny price is 516 days old
  auto a = Advise(Tiny(), r);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(Find(*a, "on-demand")->stale);
  bool warned = false;
  for (const std::string& w : a->warnings) {
    warned = warned || w.rfind("on-demand price from 2026-01-01 (tiny.csv:2)", 0) == 0;
  }
  EXPECT_TRUE(warned);
}

TEST(AdvisorTest, MissingPriceIsAnErrorNotZero) {
  AdviceRequest r = EightA100sForADay();
  r.gpu_model = "H100-80GB";
  r.region = "r1";
  auto a = Advise(Tiny(), r);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message().rfind("no price for H100-80GB in region r1", 0), 0u);
}

TEST(AdvisorTest, BadRequestsAreRejected) {
  AdviceRequest r = EightA100sForADay();
  r.hours = 0;
  EXPECT_EQ(Advise(Tiny(), r).status().code(), core::StatusCode::kInvalidArgument);
  r = EightA100sForADay();
  r.gpu_count = 0;
  EXPECT_EQ(Advise(Tiny(), r).status().code(), core::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gleaner::cost
