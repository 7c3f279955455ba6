// Accounting of GPU-hours and their money, and naming driver GPUs for the catalog.
#include "cost/accounting.h"

#include <gtest/gtest.h>

#include "cost/gpu_names.h"

namespace gleaner::cost {
namespace {

GpuHourPrices RoundPrices() {
  GpuHourPrices p;
  p.gpu_model = "A100-80GB";
  p.owned_per_gpu_hour = 1.0;
  p.marginal_per_gpu_hour = 0.05;
  p.cloud_per_gpu_hour = 2.0;
  return p;
}

TEST(AccountingTest, WorkedExample) {
  // GPU a (priced), day 0: a quarter hour idle, a quarter held idle by
  // alice, half an hour harvested by bob's job. Day 1: an hour of work by
  // alice and carol together. GPU b (model X, unpriced): an hour idle, an
  // hour harvested by bob.
  GpuTime a0{"GPU-a", "A100-80GB", 0, 1.0, 0.75, 0.25, 0.25, 0.5, {"alice"}, {"bob"}};
  GpuTime a1{"GPU-a", "A100-80GB", 1, 1.0, 1.0, 0, 0, 0, {"alice", "carol"}, {}};
  GpuTime b0{"GPU-b", "X", 0, 2.0, 1.0, 1.0, 0, 1.0, {}, {"bob"}};
  const CostReport r = Account({a0, a1, b0}, {{"A100-80GB", RoundPrices()}},
                               {{"alice", "vision"}, {"bob", "nlp"}}, Currency::kUsd);
  const CostLine& t = r.total;
  EXPECT_DOUBLE_EQ(t.observed_h, 4.0);
  EXPECT_DOUBLE_EQ(t.used_h, 1.0);  // a0: 0.75 - 0.25 - 0.5 = 0; a1: 1; b0: 1 - 1 = 0
  EXPECT_DOUBLE_EQ(t.idle_h, 1.25);
  EXPECT_DOUBLE_EQ(t.held_idle_h, 0.25);
  EXPECT_DOUBLE_EQ(t.harvested_h, 1.5);
  EXPECT_DOUBLE_EQ(t.idle_cost, 0.25 * 1.0);  // GPU b's idle hour has no owned cost
  EXPECT_DOUBLE_EQ(t.held_idle_cost, 0.25 * 1.0);
  EXPECT_DOUBLE_EQ(t.harvested_owned_value, 0.5 * 1.0);
  EXPECT_DOUBLE_EQ(t.harvested_cloud_value, 0.5 * 2.0);
  EXPECT_DOUBLE_EQ(t.harvest_energy_cost, 0.5 * 0.05);
  EXPECT_DOUBLE_EQ(t.net_savings, 1.0 - 0.025);
  EXPECT_DOUBLE_EQ(t.used_cost, 1.0 * 1.0);         // a1's hour of work
  EXPECT_DOUBLE_EQ(t.unpriced_owned_h, 1.0 + 1.0);  // b's idle and harvested hours
  EXPECT_DOUBLE_EQ(t.unpriced_cloud_h, 1.0);

  ASSERT_EQ(r.by_model.size(), 2u);
  EXPECT_DOUBLE_EQ(r.by_model.at("X").harvested_h, 1.0);
  EXPECT_DOUBLE_EQ(r.by_model.at("X").harvested_cloud_value, 0);
  EXPECT_DOUBLE_EQ(r.by_gpu.at("GPU-a").observed_h, 2.0);
  EXPECT_DOUBLE_EQ(r.by_day.at(0).observed_h, 3.0);
  EXPECT_DOUBLE_EQ(r.by_day.at(1).used_h, 1.0);
  ASSERT_EQ(r.prices.size(), 1u);  // X has none

  // Users: alice held a quarter hour idle and shared an hour of work with carol.
  const CostLine& alice = r.by_user.at("alice");
  EXPECT_DOUBLE_EQ(alice.held_idle_h, 0.25);
  EXPECT_DOUBLE_EQ(alice.held_idle_cost, 0.25);
  EXPECT_DOUBLE_EQ(alice.used_h, 0.5);
  EXPECT_DOUBLE_EQ(alice.idle_h, 0);  // idle time is nobody's
  EXPECT_DOUBLE_EQ(r.by_user.at("carol").used_h, 0.5);
  // Chargeback: alice's half hour of work and quarter hour held idle.
  EXPECT_DOUBLE_EQ(alice.used_cost, 0.5);
  EXPECT_DOUBLE_EQ(alice.charge(), 0.5 + 0.25);
  const CostLine& bob = r.by_user.at("bob");
  EXPECT_DOUBLE_EQ(bob.harvested_h, 1.5);
  EXPECT_DOUBLE_EQ(bob.harvested_cloud_value, 1.0);
  EXPECT_DOUBLE_EQ(bob.harvest_energy_cost, 0.025);
  EXPECT_DOUBLE_EQ(bob.unpriced_cloud_h, 1.0);
  EXPECT_DOUBLE_EQ(bob.unpriced_owned_h, 1.0);
  EXPECT_DOUBLE_EQ(bob.used_cost, 0);
  EXPECT_DOUBLE_EQ(bob.charge(), 0.5);  // his job's priced half hour; b's hour is unpriced
  EXPECT_EQ(r.by_user.count(kUnknownUser), 0u);
  EXPECT_DOUBLE_EQ(r.by_project.at("vision").held_idle_h, 0.25);
  EXPECT_DOUBLE_EQ(r.by_project.at("nlp").harvested_h, 1.5);
  EXPECT_DOUBLE_EQ(r.by_project.at(kNoProject).used_h, 0.5);  // carol's half
}

TEST(AccountingTest, TimeWithoutUsersGoesToUnknown) {
  GpuTime held{"GPU-a", "A100-80GB", 0, 1.0, 1.0, 0, 1.0, 0, {}, {}};
  const CostReport r = Account({held}, {{"A100-80GB", RoundPrices()}}, {}, Currency::kUsd);
  EXPECT_DOUBLE_EQ(r.by_user.at(kUnknownUser).held_idle_h, 1.0);
  EXPECT_DOUBLE_EQ(r.by_project.at(kNoProject).held_idle_cost, 1.0);
}

TEST(GpuNamesTest, DriverNamesBecomeCatalogModels) {
  constexpr uint64_t kGiB = 1ull << 30;
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA H100 80GB HBM3", std::nullopt), "H100-80GB");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA A100-SXM4-40GB", 40 * kGiB), "A100-40GB");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA A100-SXM4-80GB", std::nullopt), "A100-80GB");
  EXPECT_EQ(CatalogModelOfGpuName("Tesla V100-SXM2-16GB", std::nullopt), "V100-16GB");
  // The name omits the memory: what the driver reports picks the size.
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA H200", 143771ull << 20), "H200-141GB");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA A100-PCIE", 81920ull << 20), "A100-80GB");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA H100 NVL", 95830ull << 20), "H100-NVL-94GB");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA H100 PCIe", std::nullopt), "H100");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA L40S", 48 * kGiB), "L40S");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA L4", std::nullopt), "L4");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA A10G", std::nullopt), "A10G");
  EXPECT_EQ(CatalogModelOfGpuName("Tesla T4", std::nullopt), "T4");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA GeForce RTX 4090", std::nullopt), "RTX4090");
  EXPECT_EQ(CatalogModelOfGpuName("NVIDIA B200", std::nullopt), "B200");
  EXPECT_EQ(CatalogModelOfGpuName("", std::nullopt), "");
}

TEST(GpuHourPricesTest, MissingPartsAreNamedNeverZero) {
  auto catalog = Catalog::Parse(
      "provider,region,instance,gpu_model,gpu_count,pricing_model,price_per_instance_hour,"
      "currency,source,date\n"
      "P,r1,big,A100-80GB-SXM,8,on-demand,16,USD,s1,2026-01-01\n"
      "Q,r2,cny,L4,1,on-demand,7.2,CNY,s2,2026-01-01\n",
      "test.csv");
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  const GpuHourPrices a100 =
      PriceGpuHours("A100-80GB", *catalog, std::nullopt, Currency::kUsd, ExchangeRates());
  EXPECT_TRUE(a100.missing.empty());
  EXPECT_EQ(a100.cloud_per_gpu_hour, 2.0);  // 16 / 8
  EXPECT_EQ(a100.cloud_offer, "P r1 big");
  // 8x A100 (docs/cost.md): 8.70 USD per server-hour / 8.
  EXPECT_NEAR(*a100.owned_per_gpu_hour, 1.088, 0.001);
  const GpuHourPrices l4 =
      PriceGpuHours("L4", *catalog, std::nullopt, Currency::kCny, ExchangeRates{7.2});
  EXPECT_EQ(l4.cloud_per_gpu_hour, 7.2);
  EXPECT_FALSE(l4.owned_per_gpu_hour.has_value());  // no on-prem defaults for L4
  ASSERT_EQ(l4.missing.size(), 1u);
  EXPECT_NE(l4.missing[0].find("no on-prem cost parameters for L4"), std::string::npos);
  const GpuHourPrices b200 =
      PriceGpuHours("B200", *catalog, std::nullopt, Currency::kUsd, ExchangeRates());
  ASSERT_EQ(b200.missing.size(), 2u);
  EXPECT_NE(b200.missing[1].find("no on-demand price for B200"), std::string::npos);
}

}  // namespace
}  // namespace gleaner::cost
