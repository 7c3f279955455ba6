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
    int64_t similar = 0;       // pauses with these features seen so far
    int64_t stayed_quiet = 0;  // of which stayed quiet
  };

  struct Count {
    int64_t stayed_quiet = 0;
    int64_t total = 0;
    bool operator==(const Count&) const = default;
  };
  static constexpr int kSinceBuckets = 6;
  static constexpr int kActiveBuckets = 6;
  // What it has learned, a count per bucket: kept across restarts.
  using Cells = std::array<Count, kSinceBuckets * kActiveBuckets * 2>;

  QuietSpellModel() = default;
  // Resumes from an earlier model's cells(), which the caller has checked
  // (0 <= stayed_quiet <= total).
  explicit QuietSpellModel(const Cells& cells) : cells_(cells) {}

  Estimate Predict(const Features& f) const;
  void Learn(const Features& f, bool stayed_quiet);
  const Cells& cells() const { return cells_; }

 private:
  static size_t Cell(const Features& f);

  Cells cells_{};
};

}  // namespace gleaner::observe
