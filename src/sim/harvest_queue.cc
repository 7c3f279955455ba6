#include "sim/harvest_queue.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "sched/seeded_random.h"

namespace gleaner::sim {
namespace {

constexpr int kUsers = 12;

double Uniform(sched::SeededRandom& r) { return static_cast<double>(r.Next() >> 11) * 0x1p-53; }

int64_t LogUniform(sched::SeededRandom& r, double lo, double hi) {
  return std::llround(lo * std::exp(Uniform(r) * std::log(hi / lo)));
}

// User k (1-based) is drawn with weight 1/k.
std::string DrawUser(sched::SeededRandom& r) {
  double total = 0;
  for (int k = 1; k <= kUsers; ++k) total += 1.0 / k;
  double x = Uniform(r) * total;
  int k = 1;
  for (; k < kUsers; ++k) {
    x -= 1.0 / k;
    if (x < 0) break;
  }
  char name[8];
  std::snprintf(name, sizeof name, "u%02d", k);
  return name;
}

}  // namespace

std::vector<HarvestJob> SyntheticQueue(const SyntheticQueueOptions& o) {
  sched::SeededRandom r(o.seed);
  std::vector<HarvestJob> jobs;
  std::vector<size_t> batch_starts;  // each submission's first job
  std::set<size_t> sweep_batches;
  double asked = 0;
  while (asked < o.offered_gpu_s) {
    batch_starts.push_back(jobs.size());
    const std::string user = DrawUser(r);
    if (Uniform(r) < 0.3) {
      sweep_batches.insert(batch_starts.size() - 1);
      const int trials = 8 + static_cast<int>(r.Below(57));
      for (int i = 0; i < trials; ++i) {
        jobs.push_back({0, LogUniform(r, 600, 7200), 1, user, {}});
        asked += static_cast<double>(jobs.back().work_s);
      }
    } else {
      const double pick = Uniform(r);
      int gpus = pick < 0.6 ? 1 : pick < 0.8 ? 2 : pick < 0.95 ? 4 : 8;
      gpus = std::min(gpus, std::max(1, o.max_gpus));
      jobs.push_back({0, LogUniform(r, 300, 14400), gpus, user, {}});
      asked += static_cast<double>(gpus) * static_cast<double>(jobs.back().work_s);
    }
  }
  // Declared memory, one draw per submission (a sweep's trials alike), from
  // a stream of its own.
  sched::SeededRandom m(o.seed ^ 0x6d656d6f7279ULL);
  const double most = std::max(4.0, o.max_gpu_memory.ToGiB());
  for (size_t b = 0; b < batch_starts.size(); ++b) {
    const size_t end = b + 1 < batch_starts.size() ? batch_starts[b + 1] : jobs.size();
    const bool sweep = sweep_batches.contains(b);
    const int64_t gib = sweep ? LogUniform(m, 2, std::min(24.0, most)) : LogUniform(m, 4, most);
    for (size_t j = batch_starts[b]; j < end; ++j) {
      jobs[j].gpu_memory = core::Bytes::GiB(static_cast<uint64_t>(gib));
    }
  }
  // Arrival times drawn apart from the shapes, then given out in order.
  const int64_t span = std::max<int64_t>(1, (o.end_s - o.start_s) * 9 / 10);
  std::vector<int64_t> arrivals;
  for (size_t b = 0; b < batch_starts.size(); ++b) {
    arrivals.push_back(o.start_s + static_cast<int64_t>(r.Below(static_cast<uint64_t>(span))));
  }
  std::sort(arrivals.begin(), arrivals.end());
  for (size_t b = 0; b < batch_starts.size(); ++b) {
    const size_t end = b + 1 < batch_starts.size() ? batch_starts[b + 1] : jobs.size();
    for (size_t j = batch_starts[b]; j < end; ++j) jobs[j].submit_s = arrivals[b];
  }
  return jobs;
}

QueueFromTrace QueueFromTraceJobs(const std::vector<TraceJob>& trace, int64_t start_s,
                                  int64_t end_s, int max_gpus) {
  QueueFromTrace q;
  for (const TraceJob& t : trace) {
    if (t.gpus > max_gpus) {
      ++q.too_large;
    } else if (start_s + t.submit_s >= end_s) {
      ++q.too_late;
    } else {
      q.jobs.push_back({start_s + t.submit_s, t.duration_s, t.gpus, "itp", {}});
    }
  }
  std::stable_sort(q.jobs.begin(), q.jobs.end(), [](const HarvestJob& a, const HarvestJob& b) {
    return a.submit_s < b.submit_s;
  });
  return q;
}

}  // namespace gleaner::sim
