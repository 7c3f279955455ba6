#include "cost/catalog.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <sstream>

#include "core/csv.h"
#include "core/enum_names.h"
#include "cost/civil_date.h"

namespace gleaner::cost {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

struct Column {
  const char* name;
  bool required;
};
constexpr Column kColumns[] = {
    {"provider", true},
    {"region", true},
    {"instance", true},
    {"gpu_model", true},
    {"gpu_count", true},
    {"pricing_model", true},
    {"price_per_instance_hour", true},
    {"currency", true},
    {"source", true},
    {"date", true},
    {"confidence", false},
    {"notes", false},
};
constexpr size_t kColumnCount = sizeof(kColumns) / sizeof(kColumns[0]);
constexpr size_t kMissing = static_cast<size_t>(-1);

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

constexpr auto kPricingModelNames = core::MakeEnumNames<PricingModel>({
    {PricingModel::kOnDemand, "on-demand"},
    {PricingModel::kSpot, "spot"},
    {PricingModel::kReserved1y, "reserved-1y"},
    {PricingModel::kReserved3y, "reserved-3y"},
    {PricingModel::kSubscription, "subscription"},
    {PricingModel::kCapacityBlock, "capacity-block"},
});

std::string_view PricingModelName(PricingModel model) { return kPricingModelNames.Name(model); }

std::optional<PricingModel> ParsePricingModel(std::string_view name) {
  return kPricingModelNames.Parse(name);
}

std::string_view CurrencyName(Currency currency) {
  return currency == Currency::kUsd ? "USD" : "CNY";
}

std::optional<Currency> ParseCurrency(std::string_view name) {
  const std::string up = Upper(name);
  if (up == "USD") return Currency::kUsd;
  if (up == "CNY" || up == "RMB") return Currency::kCny;
  return std::nullopt;
}

double ExchangeRates::Convert(double amount, Currency from, Currency to) const {
  if (from == to) return amount;
  return from == Currency::kUsd ? amount * cny_per_usd : amount / cny_per_usd;
}

std::string ReduceGpuModel(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

bool GpuModelMatches(std::string_view query, std::string_view catalog_model) {
  const std::string q = ReduceGpuModel(query);
  const std::string m = ReduceGpuModel(catalog_model);
  if (q.empty()) return false;
  if (q == m) return true;
  if (m.size() <= q.size() || m.compare(0, q.size(), q) != 0) return false;
  const std::string_view rest = std::string_view(m).substr(q.size());
  for (std::string_view suffix : {"SXM", "SXM4", "SXM5", "PCIE", "NVL"}) {
    if (rest == suffix) return true;
  }
  return false;
}

core::Result<Catalog> Catalog::Parse(std::string_view csv_text, std::string_view name) {
  std::istringstream in{std::string(csv_text)};
  GLEANER_ASSIGN_OR_RETURN(core::CsvReader reader,
                           core::CsvReader::Over(in, std::string(name), core::CsvBlanks::kTrim));
  size_t index[kColumnCount];
  for (size_t c = 0; c < kColumnCount; ++c) {
    index[c] = reader.Find(kColumns[c].name).value_or(kMissing);
    if (index[c] == kMissing && kColumns[c].required) {
      return core::InvalidArgument(reader.At("the header has no column \"") + kColumns[c].name +
                                   "\"; the catalog format is in docs/cost.md");
    }
  }
  Catalog catalog;
  while (reader.Next()) {
    const std::string where = reader.At("");
    if (const std::string problem = reader.RowProblem(); !problem.empty()) {
      return core::InvalidArgument(where + problem);
    }
    const std::vector<std::string>& fields = reader.fields();
    auto get = [&](size_t c) -> const std::string& {
      static const std::string kEmpty;
      return index[c] == kMissing ? kEmpty : fields[index[c]];
    };
    PriceRow row;
    row.provider = get(0);
    row.region = get(1);
    row.instance = get(2);
    row.gpu_model = get(3);
    for (size_t c : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{8}}) {
      if (get(c).empty()) {
        return core::InvalidArgument(where + "column " + kColumns[c].name +
                                     ": expected a value, got an empty field");
      }
    }
    {
      const std::string& t = get(4);
      int v = 0;
      const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || p != t.data() + t.size() || v < 1 || v > 1024) {
        return core::InvalidArgument(where + "column gpu_count: expected an integer from 1 to " +
                                     "1024, got " + Quoted(t));
      }
      row.gpu_count = v;
    }
    {
      const auto m = ParsePricingModel(get(5));
      if (!m) {
        return core::InvalidArgument(where + "column pricing_model: expected one of " +
                                     kPricingModelNames.List(", ") + ", got " + Quoted(get(5)));
      }
      row.pricing_model = *m;
    }
    {
      const std::string& t = get(6);
      double v = 0;
      const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(v) || v <= 0) {
        return core::InvalidArgument(where +
                                     "column price_per_instance_hour: expected a number above 0, "
                                     "got " +
                                     Quoted(t));
      }
      row.price_per_instance_hour = v;
    }
    {
      const auto c = ParseCurrency(get(7));
      if (!c) {
        return core::InvalidArgument(where + "column currency: expected USD or CNY, got " +
                                     Quoted(get(7)));
      }
      row.currency = *c;
    }
    row.source = get(8);
    {
      const auto d = ParseIsoDate(get(9));
      if (!d) {
        return core::InvalidArgument(where + "column date: expected a date YYYY-MM-DD, got " +
                                     Quoted(get(9)));
      }
      row.date_days = *d;
    }
    row.confidence = get(10);
    row.notes = get(11);
    row.origin = std::string(name) + ":" + std::to_string(reader.line());
    catalog.rows_.push_back(std::move(row));
  }
  return catalog;
}

void Catalog::Merge(const Catalog& overrides) {
  auto key = [](const PriceRow& r) {
    return Upper(r.provider) + "\n" + Upper(r.region) + "\n" + Upper(r.instance) + "\n" +
           std::string(PricingModelName(r.pricing_model));
  };
  for (const PriceRow& o : overrides.rows_) {
    const std::string k = key(o);
    std::erase_if(rows_, [&](const PriceRow& r) { return key(r) == k; });
    rows_.push_back(o);
  }
}

core::Result<std::vector<PriceRow>> Catalog::Find(std::string_view gpu_model,
                                                  std::string_view region) const {
  std::vector<PriceRow> found;
  const std::string want_region = Upper(region);
  for (const PriceRow& r : rows_) {
    if (!GpuModelMatches(gpu_model, r.gpu_model)) continue;
    if (!want_region.empty() && Upper(r.region) != want_region) continue;
    found.push_back(r);
  }
  if (found.empty()) {
    return core::NotFound(
        "no price for " + std::string(gpu_model) +
        (region.empty() ? std::string(" in any region") : " in region " + std::string(region)) +
        " in the catalog; add a row with --catalog FILE (docs/cost.md)");
  }
  return found;
}

}  // namespace gleaner::cost
