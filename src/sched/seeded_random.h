#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace gleaner::sched {

// A small seeded generator (SplitMix64) whose sequence is the same on every
// platform and standard library, unlike std::shuffle and the std::
// distributions: the same seed gives byte-identical experiments everywhere.
// Thread-compatible.
class SeededRandom {
  __extension__ typedef unsigned __int128 Uint128;  // GCC and Clang; -Wpedantic knows it not

 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n), n >= 1 (Lemire's multiply-shift; the bias is below
  // 2^-32 for any n the experiments use).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<Uint128>(Next()) * n) >> 64);
  }

  // Fisher-Yates.
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[Below(i)]);
  }

 private:
  uint64_t state_;
};

}  // namespace gleaner::sched
