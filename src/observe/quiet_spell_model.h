#pragma once

#include <array>
#include <cstdint>

#include "core/units.h"

namespace gleaner::observe {

// Estimates how likely a quiet GPU is to stay quiet for the classifier's
// horizon, from what became of similar pauses before. "Similar" means the
// same bucket of: time since the GPU last did anything at all, how much it
// did in the last hour, and whether it reads exactly 0 % now. A GPU that
// polls at 1 % or bursts every few minutes is in a different bucket from
// one that has been flat at zero for an hour: its own rhythm decides.
//
// Learned online from outcomes the classifier observes; it starts with no
// opinion (one stayed-quiet and one resumed pause per bucket). Pure and
// deterministic; thread-compatible.
class QuietSpellModel {
 public:
  struct Features {
    core::Duration since_any_activity{};  // since utilization was last above 0
    core::Duration active_last_hour{};    // time with utilization above 0
    bool reads_zero = false;              // utilization exactly 0 now
  };
  struct Estimate {
    double probability = 0.5;  // chance to stay quiet for the horizon
    int64_t similar = 0;       // quiet moments with these features seen so far
    int64_t stayed_quiet = 0;  // of which stayed quiet
    int64_t pauses = 0;        // the quiet spells those moments came from
  };

  // A quiet GPU is judged every pass, so one spell brings many moments to
  // a bucket: `pauses` counts the spells, to tell a pattern from one
  // GPU's one pause.
  struct Count {
    int64_t stayed_quiet = 0;
    int64_t total = 0;
    int64_t pauses = 0;
    bool operator==(const Count&) const = default;
  };
  static constexpr int kSinceBuckets = 6;
  static constexpr int kActiveBuckets = 6;
  // What it has learned, a count per bucket: kept across restarts.
  using Cells = std::array<Count, kSinceBuckets * kActiveBuckets * 2>;

  QuietSpellModel() = default;
  // Resumes from an earlier model's cells(), which the caller has checked
  // (0 <= stayed_quiet <= total, 0 <= pauses <= total).
  explicit QuietSpellModel(const Cells& cells) : cells_(cells) {}

  Estimate Predict(const Features& f) const;
  // `new_pause`: the first moment of its spell in this bucket.
  void Learn(const Features& f, bool stayed_quiet, bool new_pause = true);
  const Cells& cells() const { return cells_; }
  // The bucket of `f`: the same for two moments that are similar.
  static size_t Cell(const Features& f);

 private:
  Cells cells_{};
};

}  // namespace gleaner::observe
