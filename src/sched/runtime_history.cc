#include "sched/runtime_history.h"

#include <algorithm>
#include <array>

#include "sched/job_spec.h"

namespace gleaner::sched {
namespace {

// The last component of a path, at most a file name's length: an argument
// of 128 KiB must not become a key of 128 KiB held for as long as it is used.
std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return base.substr(0, kMaxPathComponentBytes);
}

// Keys of the four levels, most specific first. '\n' cannot appear in a
// user or project name and separates the parts.
std::array<std::string, 4> KeysOf(const RuntimeKey& k) {
  return {k.user + '\n' + k.project + '\n' + k.command, k.user + '\n' + k.command,
          k.user + '\n' + k.project + '\n', k.user};
}

// The smallest run at least `q` of the runs do not exceed (nearest rank).
core::Duration Quantile(std::vector<core::Duration> runs, double q) {
  std::sort(runs.begin(), runs.end());
  size_t rank = static_cast<size_t>(q * static_cast<double>(runs.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, runs.size());
  return runs[rank - 1];
}

}  // namespace

std::string CommandKey(const std::vector<std::string>& argv) {
  if (argv.empty()) return "";
  std::string key = BaseName(argv.front());
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i].empty() || argv[i].front() == '-') continue;
    return key + " " + BaseName(argv[i]);
  }
  return key;
}

void RuntimeHistory::AddTo(Level& level, const std::string& key, core::Duration ran) {
  auto it = level.runs.find(key);
  if (it == level.runs.end()) {
    if (level.runs.size() >= options_.max_keys && !level.order.empty()) {
      level.runs.erase(level.order.front());
      level.order.pop_front();
    }
    level.order.push_back(key);
    it = level.runs
             .emplace(key, std::pair{std::deque<core::Duration>{}, std::prev(level.order.end())})
             .first;
  } else {
    level.order.splice(level.order.end(), level.order, it->second.second);
  }
  std::deque<core::Duration>& runs = it->second.first;
  runs.push_back(ran);
  while (runs.size() > options_.per_key) runs.pop_front();
}

void RuntimeHistory::Add(const RuntimeKey& key, core::Duration ran) {
  if (ran.count() <= 0 || key.user.empty()) return;
  const auto keys = KeysOf(key);
  for (size_t i = 0; i < keys.size(); ++i) AddTo(levels_[i], keys[i], ran);
}

std::optional<RuntimeGuess> RuntimeHistory::Predict(const RuntimeKey& key) const {
  if (key.user.empty()) return std::nullopt;
  const auto keys = KeysOf(key);
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto it = levels_[i].runs.find(keys[i]);
    if (it == levels_[i].runs.end()) continue;
    const std::deque<core::Duration>& runs = it->second.first;
    if (static_cast<int>(runs.size()) < options_.min_runs) continue;
    const std::vector<core::Duration> all(runs.begin(), runs.end());
    RuntimeGuess g;
    g.p50 = Quantile(all, 0.5);
    g.p80 = Quantile(all, 0.8);
    g.runs = static_cast<int>(all.size());
    const std::string what = i <= 1 && !key.command.empty()   ? " of " + key.command
                             : i == 2 && !key.project.empty() ? " in project " + key.project
                                                              : "";
    g.basis = "p80 of " + std::to_string(g.runs) + " runs" + what + " by " + key.user;
    return g;
  }
  return std::nullopt;
}

}  // namespace gleaner::sched
