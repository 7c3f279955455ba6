#include "cost/catalog.h"

#include <gtest/gtest.h>

#include "cost/civil_date.h"

namespace gleaner::cost {
namespace {

constexpr const char* kHeader =
    "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,currency,"
    "source,date\n";

std::string ErrorOf(const std::string& body) {
  auto c = Catalog::Parse(std::string(kHeader) + body, "test.csv");
  return c.ok() ? "" : c.status().message();
}

TEST(CatalogTest, ParsesRowsWithQuotedCommas) {
  auto c = Catalog::Parse(std::string(kHeader) +
                              "AWS,us-east-1,p4de.24xlarge,A100-80GB-SXM,8,on-demand,27.44705,USD,"
                              "\"page, quoted \"\"x\"\"\",2026-11-09\n",
                          "test.csv");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->rows().size(), 1u);
  const PriceRow& r = c->rows()[0];
  EXPECT_EQ(r.gpu_count, 8);
  EXPECT_EQ(r.pricing_model, PricingModel::kOnDemand);
  EXPECT_DOUBLE_EQ(r.price_per_instance_hour, 27.44705);
  EXPECT_EQ(r.source, "page, quoted \"x\"");
  EXPECT_EQ(FormatIsoDate(r.date_days), "2026-11-09");
  EXPECT_EQ(r.origin, "test.csv:2");
}

TEST(CatalogTest, BadRowsAreNamedByFileAndLine) {
  const std::string good = "A,r,i,A100-80GB,8,on-demand,1,USD,s,2026-01-01\n";
  EXPECT_EQ(ErrorOf(good + "A,r,i,A100-80GB,8,hourly,1,USD,s,2026-01-01\n"),
            "test.csv:3: column pricing_model: expected one of on-demand, spot, reserved-1y, "
            "reserved-3y, subscription, capacity-block, got \"hourly\"");
  EXPECT_EQ(ErrorOf(good + "A,r,i,A100-80GB,8,spot,,USD,s,2026-01-01\n"),
            "test.csv:3: column price_per_instance_hour: expected a number above 0, got \"\"");
  EXPECT_EQ(ErrorOf("A,r,i,A100-80GB,8,spot,-2,USD,s,2026-01-01\n"),
            "test.csv:2: column price_per_instance_hour: expected a number above 0, got \"-2\"");
  EXPECT_EQ(ErrorOf("A,r,i,A100-80GB,8,spot,2,EUR,s,2026-01-01\n"),
            "test.csv:2: column currency: expected USD or CNY, got \"EUR\"");
  EXPECT_EQ(ErrorOf("A,r,i,A100-80GB,8,spot,2,USD,s,2026-02-30\n"),
            "test.csv:2: column date: expected a date YYYY-MM-DD, got \"2026-02-30\"");
  EXPECT_EQ(ErrorOf("A,r,i,A100-80GB,0,spot,2,USD,s,2026-02-01\n"),
            "test.csv:2: column gpu_count: expected an integer from 1 to 1024, got \"0\"");
  EXPECT_EQ(ErrorOf("A,r,i,A100-80GB,1,spot,2,USD,,2026-02-01\n"),
            "test.csv:2: column source: expected a value, got an empty field");
  EXPECT_EQ(ErrorOf("A,r,i,A100-80GB,1,spot,2,USD\n"),
            "test.csv:2: expected 10 comma-separated fields as in the header, got 8");
  EXPECT_EQ(ErrorOf("A,r,\"i,A100-80GB,1,spot,2,USD,s,2026-02-01\n"),
            "test.csv:2: a quoted field is not closed");
  auto no_column = Catalog::Parse("provider,region\n", "x.csv");
  ASSERT_FALSE(no_column.ok());
  EXPECT_EQ(no_column.status().message(),
            "x.csv:1: the header has no column \"instance\"; the catalog format is in "
            "docs/cost.md");
}

TEST(CatalogTest, GpuModelMatchingIgnoresCaseSeparatorsAndFormFactor) {
  EXPECT_TRUE(GpuModelMatches("A100-80GB", "A100-80GB-SXM"));
  EXPECT_TRUE(GpuModelMatches("a100 80gb", "A100-80GB-PCIe"));
  EXPECT_TRUE(GpuModelMatches("A100-80GB", "A100-80GB"));
  EXPECT_TRUE(GpuModelMatches("H100-NVL-94GB", "H100-NVL-94GB"));
  EXPECT_FALSE(GpuModelMatches("A100-80GB-SXM", "A100-80GB-PCIe"));
  EXPECT_FALSE(GpuModelMatches("A100", "A100-80GB"));
  EXPECT_FALSE(GpuModelMatches("A100-80GB", "A100-40GB-SXM"));
  EXPECT_FALSE(GpuModelMatches("", "A100"));
}

TEST(CatalogTest, MissingPriceSaysModelAndRegion) {
  auto c = Catalog::Parse(
      std::string(kHeader) + "A,r1,i,A100-80GB,8,on-demand,1,USD,s,2026-01-01\n", "t");
  ASSERT_TRUE(c.ok());
  auto none = c->Find("H100-80GB", "r1");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), core::StatusCode::kNotFound);
  EXPECT_EQ(none.status().message().rfind("no price for H100-80GB in region r1", 0), 0u)
      << none.status().message();
  auto other_region = c->Find("A100-80GB", "r2");
  ASSERT_FALSE(other_region.ok());
  EXPECT_EQ(other_region.status().message().rfind("no price for A100-80GB in region r2", 0), 0u);
  auto any = c->Find("H100", "");
  ASSERT_FALSE(any.ok());
  EXPECT_EQ(any.status().message().rfind("no price for H100 in any region", 0), 0u);
  EXPECT_TRUE(c->Find("a100-80gb", "R1").ok());
}

TEST(CatalogTest, UserRowsOverrideByProviderRegionInstanceAndModel) {
  auto base = Catalog::Parse(std::string(kHeader) +
                                 "A,r1,i,A100-80GB,8,on-demand,10,USD,s,2026-01-01\n"
                                 "A,r1,i,A100-80GB,8,spot,3,USD,s,2026-01-01\n",
                             "base");
  auto user = Catalog::Parse(std::string(kHeader) +
                                 "a,R1,I,A100-80GB,8,on-demand,9,USD,mine,2026-06-01\n"
                                 "B,r1,j,A100-80GB,8,on-demand,8,USD,mine,2026-06-01\n",
                             "user");
  ASSERT_TRUE(base.ok() && user.ok());
  base->Merge(*user);
  ASSERT_EQ(base->rows().size(), 3u);
  EXPECT_EQ(base->rows()[0].pricing_model, PricingModel::kSpot);
  EXPECT_EQ(base->rows()[1].price_per_instance_hour, 9);
  EXPECT_EQ(base->rows()[1].origin, "user:2");
}

TEST(CatalogTest, CurrencyConversionAtTheConfiguredRate) {
  ExchangeRates rates;
  EXPECT_DOUBLE_EQ(rates.cny_per_usd, 7.2);
  EXPECT_DOUBLE_EQ(rates.Convert(10, Currency::kUsd, Currency::kCny), 72);
  rates.cny_per_usd = 8;
  EXPECT_DOUBLE_EQ(rates.Convert(72, Currency::kCny, Currency::kUsd), 9);
  EXPECT_DOUBLE_EQ(rates.Convert(5, Currency::kCny, Currency::kCny), 5);
  EXPECT_EQ(ParseCurrency("cny"), Currency::kCny);
  EXPECT_FALSE(ParseCurrency("EUR").has_value());
}

TEST(CatalogTest, ShippedCatalogParses) {
  auto c = Catalog::Parse(BuiltinCatalogCsv(), kBuiltinCatalogName);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_GT(c->rows().size(), 100u);
  EXPECT_TRUE(c->Find("A100-80GB", "").ok());
  EXPECT_TRUE(c->Find("H100-80GB", "us-east-1").ok());
}

TEST(CivilDateTest, RoundTripsAndRejectsBadDates) {
  EXPECT_EQ(ParseIsoDate("1970-01-01"), 0);
  EXPECT_EQ(ParseIsoDate("2026-11-30"), 20787);
  EXPECT_EQ(FormatIsoDate(20787), "2026-11-30");
  EXPECT_EQ(ParseIsoDate("2024-02-29"), 19782);
  EXPECT_FALSE(ParseIsoDate("2023-02-29").has_value());
  EXPECT_FALSE(ParseIsoDate("2026-13-01").has_value());
  EXPECT_FALSE(ParseIsoDate("26-01-01").has_value());
  EXPECT_EQ(DaysFromUnixSeconds(86400 * 3 + 5), 3);
}

}  // namespace
}  // namespace gleaner::cost
