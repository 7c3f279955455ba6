#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/units.h"

namespace gleaner::sched {

// What a run is known by: who ran it, under which project, and what (the
// program and its script: "python train.py", from CommandKey).
struct RuntimeKey {
  std::string user;
  std::string project;
  std::string command;
};

// The program's name and its first argument that is not an option, both
// without their directories: "python train.py" for
// ["/usr/bin/python", "-u", "/home/a/train.py", "--lr", "0.1"]. Arguments
// after it (hyperparameters, paths) do not name a different job.
std::string CommandKey(const std::vector<std::string>& argv);

struct RuntimeGuess {
  core::Duration p50{};
  core::Duration p80{};
  int runs = 0;       // past runs it is drawn from
  std::string basis;  // "p80 of 12 runs of python train.py by alice"
};

// How long a job will run, from how long the same user's recent runs took:
// the same command in the same project first, then the same command, then
// the same project, then anything the user ran, the first with at least
// `min_runs` runs. Per-user recent durations predict better than global
// ones (Hu et al., SC'21, on Helios), so no other user's runs are used.
// Keeps the newest `per_key` runs of each key and the most recently used
// `max_keys` keys of each kind. Thread-compatible.
class RuntimeHistory {
 public:
  struct Options {
    int min_runs = 3;
    size_t per_key = 32;
    size_t max_keys = 20'000;
  };
  RuntimeHistory() : RuntimeHistory(Options{}) {}
  explicit RuntimeHistory(Options options) : options_(options) {}

  // A run that succeeded after running `ran` (non-positive ones are ignored).
  void Add(const RuntimeKey& key, core::Duration ran);
  // Nullopt when the user has fewer than `min_runs` runs at every level.
  std::optional<RuntimeGuess> Predict(const RuntimeKey& key) const;

 private:
  // One kind of key: recent runs per key, least recently added first.
  struct Level {
    std::map<std::string, std::pair<std::deque<core::Duration>, std::list<std::string>::iterator>>
        runs;
    std::list<std::string> order;
  };
  void AddTo(Level& level, const std::string& key, core::Duration ran);

  Options options_;
  Level levels_[4];  // user+project+command, user+command, user+project, user
};

}  // namespace gleaner::sched
