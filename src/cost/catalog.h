#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gleaner::cost {

// How a price is paid. Names as written in the catalog's pricing_model column.
enum class PricingModel {
  kOnDemand,       // "on-demand": pay per hour, no commitment
  kSpot,           // "spot": interruptible, pay per hour
  kReserved1y,     // "reserved-1y": effective hourly price of a 1-year commitment
  kReserved3y,     // "reserved-3y": effective hourly price of a 3-year commitment
  kSubscription,   // "subscription": prepaid monthly, given per hour (monthly price / 730)
  kCapacityBlock,  // "capacity-block": a reserved window paid per hour
};
std::string_view PricingModelName(PricingModel model);
std::optional<PricingModel> ParsePricingModel(std::string_view name);

enum class Currency { kUsd, kCny };
std::string_view CurrencyName(Currency currency);              // "USD", "CNY"
std::optional<Currency> ParseCurrency(std::string_view name);  // case-insensitive

// Converts between the currencies at one configured rate. There is no
// default from the market: kDefaultCnyPerUsd is an assumption (docs/cost.md).
struct ExchangeRates {
  static constexpr double kDefaultCnyPerUsd = 7.2;
  double cny_per_usd = kDefaultCnyPerUsd;

  double Convert(double amount, Currency from, Currency to) const;
};

// One catalog row: the price of one instance-hour.
struct PriceRow {
  std::string provider;
  std::string region;
  std::string instance;
  std::string gpu_model;  // as the source spells it, e.g. "A100-80GB-SXM"
  int gpu_count = 0;      // GPUs per instance, >= 1
  PricingModel pricing_model = PricingModel::kOnDemand;
  double price_per_instance_hour = 0;  // > 0, in `currency`
  Currency currency = Currency::kUsd;
  std::string source;
  int64_t date_days = 0;   // when the price was seen, days since 1970-01-01
  std::string confidence;  // "high", "medium", "low" or empty
  std::string notes;
  std::string origin;  // "FILE:LINE" it was read from
};

// GPU model matching. Both names are reduced to upper-case letters and
// digits ("A100-80GB-SXM" -> "A10080GBSXM"). A query matches a catalog model
// when the reduced names are equal, or when the catalog's name is the
// query's followed by a form-factor suffix only: SXM, SXM4, SXM5, PCIE, NVL.
// So "A100-80GB" matches "A100-80GB-SXM" and "A100-80GB-PCIe", while
// "A100-80GB-SXM" matches only SXM and "A100" matches neither (memory size
// matters).
std::string ReduceGpuModel(std::string_view name);
bool GpuModelMatches(std::string_view query, std::string_view catalog_model);

// A set of price rows. Thread-compatible value type.
class Catalog {
 public:
  // The columns, in any order; extra columns are ignored:
  // provider,region,instance,gpu_model,gpu_count,pricing_model,
  // price_per_instance_hour,currency,source,date[,confidence][,notes]
  // Every row is checked; the first bad one is an InvalidArgument
  // "NAME:LINE: WHAT" naming the column, the value and what was expected.
  // `name` is what error messages call the text (usually its path).
  static core::Result<Catalog> Parse(std::string_view csv_text, std::string_view name);

  // Adds `overrides`' rows; a row with the same provider, region, instance
  // and pricing model as an existing one replaces it (case-insensitive).
  void Merge(const Catalog& overrides);

  const std::vector<PriceRow>& rows() const { return rows_; }

  // Rows for `gpu_model` (GpuModelMatches) in `region` ("" = every region;
  // otherwise a case-insensitive exact match). NotFound "no price for
  // MODEL in region REGION" (or "in any region") when there is none.
  core::Result<std::vector<PriceRow>> Find(std::string_view gpu_model,
                                           std::string_view region) const;

 private:
  std::vector<PriceRow> rows_;
};

// The catalog shipped in the binary (data/prices/catalog.csv).
std::string_view BuiltinCatalogCsv();
inline constexpr std::string_view kBuiltinCatalogName = "data/prices/catalog.csv";

}  // namespace gleaner::cost
