#pragma once

// What the tests of the site's own history (dry-run, report) share: a fixed
// start for the minutes they store, and the shipped price catalog.
#include "core/units.h"
#include "cost/catalog.h"

namespace gleaner::report::testing {

inline const core::TimePoint kT0 = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

inline const cost::Catalog& BuiltinCatalog() {
  static const cost::Catalog catalog =
      std::move(cost::Catalog::Parse(cost::BuiltinCatalogCsv(), cost::kBuiltinCatalogName)).value();
  return catalog;
}

}  // namespace gleaner::report::testing
