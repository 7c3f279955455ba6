#include "observe/quiet_spell_model.h"

#include <algorithm>
#include <iterator>

namespace gleaner::observe {
namespace {

int Bucket(core::Duration d, const core::Duration* edges, int count) {
  return static_cast<int>(std::upper_bound(edges, edges + count, d) - edges);
}

// Bucket edges: pauses are told apart at the scales idle spells live at
// (minutes to an hour), activity at the scale of a burst (a minute) and of
// a busy hour.
constexpr core::Duration kSinceEdges[] = {core::Seconds(120), core::Seconds(300),
                                          core::Seconds(600), core::Seconds(1200),
                                          core::Seconds(2400)};
constexpr core::Duration kActiveEdges[] = {core::Seconds(1), core::Seconds(120), core::Seconds(300),
                                           core::Seconds(600), core::Seconds(1200)};

}  // namespace

size_t QuietSpellModel::Cell(const Features& f) {
  static_assert(std::size(kSinceEdges) + 1 == kSinceBuckets);
  static_assert(std::size(kActiveEdges) + 1 == kActiveBuckets);
  const int since = Bucket(f.since_any_activity, kSinceEdges, kSinceBuckets - 1);
  const int active = Bucket(f.active_last_hour, kActiveEdges, kActiveBuckets - 1);
  return static_cast<size_t>((since * kActiveBuckets + active) * 2 + (f.reads_zero ? 1 : 0));
}

QuietSpellModel::Estimate QuietSpellModel::Predict(const Features& f) const {
  const Count& c = cells_[Cell(f)];
  // Laplace's rule: one pause of each kind before any is seen.
  const double p = (static_cast<double>(c.stayed_quiet) + 1) / (static_cast<double>(c.total) + 2);
  return {p, c.total, c.stayed_quiet, c.pauses};
}

void QuietSpellModel::Learn(const Features& f, bool stayed_quiet, bool new_pause) {
  Count& c = cells_[Cell(f)];
  ++c.total;
  if (stayed_quiet) ++c.stayed_quiet;
  if (new_pause) ++c.pauses;
}

}  // namespace gleaner::observe
