#include "sim/replay.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <tuple>

#include "sim/replay_policy.h"

namespace gleaner::sim {
namespace {

core::Status CheckNodes(const std::vector<TraceJob>& jobs, const ReplayConfig& c) {
  for (const ReplayNode& n : c.nodes) {
    if (n.gpus < 1 || n.gpus > 64) {
      return core::InvalidArgument("a node of model " + n.model + " has " + std::to_string(n.gpus) +
                                   " GPUs; expected 1 to 64");
    }
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const TraceJob& j = jobs[i];
    const bool fits = std::any_of(c.nodes.begin(), c.nodes.end(),
                                  [&](const ReplayNode& n) { return NodeCanRun(n, j); });
    if (!fits) {
      std::string models;
      for (const std::string& m : j.gpu_models) models += (models.empty() ? "" : "|") + m;
      return core::InvalidArgument("job " + std::to_string(i + 1) + " of the trace asks for " +
                                   std::to_string(j.gpus) + " GPUs of model " +
                                   (models.empty() ? "any" : models) +
                                   " on one node, and no node has them");
    }
  }
  return core::Status::Ok();
}

// The cluster's mean speed over its priced GPUs; nullopt when none is.
std::optional<double> MeanSpeed(const ReplayConfig& c) {
  double gpus = 0, speed = 0;
  for (const ReplayNode& n : c.nodes) {
    const std::optional<sched::ModelPrice> p = c.model_price(n.model, core::Bytes::GiB(80));
    if (!p || !(p->speed > 0)) continue;
    gpus += n.gpus;
    speed += n.gpus * p->speed;
  }
  if (gpus == 0) return std::nullopt;
  return speed / gpus;
}

core::Status CheckConfig(const std::vector<TraceJob>& jobs, const ReplayConfig& c) {
  if (c.gleaner_tick_s < 1) return core::InvalidArgument("the tick must be at least 1 s");
  if (!c.nodes.empty()) return CheckNodes(jobs, c);
  if (c.gpus_per_node < 1) {
    return core::InvalidArgument("--gpus-per-node must be at least 1, got " +
                                 std::to_string(c.gpus_per_node));
  }
  if (c.gpus < 1 || c.gpus % c.gpus_per_node != 0) {
    return core::InvalidArgument("--gpus must be a positive multiple of --gpus-per-node (" +
                                 std::to_string(c.gpus_per_node) + "), got " +
                                 std::to_string(c.gpus));
  }
  int largest = 0;
  for (const TraceJob& j : jobs) largest = std::max(largest, j.gpus);
  // A job larger than a node takes whole nodes; it must fit in them.
  const int per = c.gpus_per_node;
  const int needed = largest <= per ? largest : (largest + per - 1) / per * per;
  if (needed > c.gpus) {
    return core::InvalidArgument(
        "the trace's largest job needs " + std::to_string(needed) + " GPUs (" +
        std::to_string(largest) + " asked, in whole nodes) but the cluster has " +
        std::to_string(c.gpus) + "; give --gpus of at least " + std::to_string(needed));
  }
  return core::Status::Ok();
}

// How long `job` runs on a GPU of `price`'s model, its cost counted.
int64_t RunTime(const TraceJob& job, const std::optional<sched::ModelPrice>& price,
                std::optional<double> mean_speed, ReplayCost* cost) {
  if (!price || !mean_speed || !(price->speed > 0) || !(price->per_gpu_hour > 0)) {
    ++cost->unpriced_jobs;
    return job.duration_s;
  }
  const double recorded_h = static_cast<double>(job.duration_s) / 3600;
  const int64_t duration = std::max<int64_t>(
      1, std::llround(static_cast<double>(job.duration_s) * *mean_speed / price->speed));
  const double gpu_hours = job.gpus * static_cast<double>(duration) / 3600;
  cost->gpu_hour_cost += gpu_hours * price->per_gpu_hour;
  cost->work_a100_hours += job.gpus * recorded_h * *mean_speed;
  cost->gpu_hours_by_model[price->model] += gpu_hours;
  return duration;
}

}  // namespace

bool NodeCanRun(const ReplayNode& node, const TraceJob& job) {
  if (node.gpus < job.gpus) return false;
  return job.gpu_models.empty() ||
         std::any_of(job.gpu_models.begin(), job.gpu_models.end(), [&](const std::string& m) {
           return !m.empty() && node.model.find(m) != std::string::npos;
         });
}

core::Result<ReplayResult> RunReplay(const std::vector<TraceJob>& jobs, const ReplayConfig& c) {
  GLEANER_RETURN_IF_ERROR(CheckConfig(jobs, c));
  ReplayPolicyOptions po;
  po.nodes = c.nodes.empty() ? c.gpus / c.gpus_per_node : static_cast<int>(c.nodes.size());
  // Nodes of several models: every job fits one (CheckNodes), so none is
  // a gang to place beside the Scheduler.
  po.gpus_per_node = c.gpus_per_node;
  for (const ReplayNode& n : c.nodes) po.gpus_per_node = std::max(po.gpus_per_node, n.gpus);
  po.gleaner_tick_s = c.gleaner_tick_s;
  po.models = c.nodes;
  po.model_price = c.model_price;
  po.cost_aware = c.cost_aware;
  const std::optional<double> mean_speed = c.model_price ? MeanSpeed(c) : std::optional<double>();
  auto made = MakeReplayPolicy(c.policy, jobs, po);
  if (!made.ok()) return made.status();
  ReplayPolicy& policy = **made;

  // Arrivals in time order, trace order among equals.
  std::vector<int> arrivals(jobs.size());
  std::iota(arrivals.begin(), arrivals.end(), 0);
  std::stable_sort(arrivals.begin(), arrivals.end(), [&](int a, int b) {
    return jobs[static_cast<size_t>(a)].submit_s < jobs[static_cast<size_t>(b)].submit_s;
  });
  // Running jobs by (end, start sequence): ends at one instant come in the
  // order the jobs started.
  using Ending = std::tuple<int64_t, int64_t, int>;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ending;
  int64_t start_seq = 0;

  ReplayResult r;
  if (c.model_price) r.cost.emplace();
  r.outcomes.resize(jobs.size());
  r.timeline.reserve(jobs.size() * 2 + 1);
  size_t next_arrival = 0;
  int busy = 0;
  std::vector<int> started;
  std::optional<int64_t> wakeup;
  int idle_instants = 0;  // in a row, with jobs waiting and none running or to come
  while (next_arrival < arrivals.size() || !ending.empty() || policy.queued() > 0) {
    int64_t now = INT64_MAX;
    if (next_arrival < arrivals.size()) {
      now = jobs[static_cast<size_t>(arrivals[next_arrival])].submit_s;
    }
    if (!ending.empty()) now = std::min(now, std::get<0>(ending.top()));
    if (wakeup) now = std::min(now, *wakeup);
    if (now == INT64_MAX) {
      return core::FailedPrecondition("policy " + c.policy + " left " +
                                      std::to_string(policy.queued()) +
                                      " jobs waiting on an idle cluster; this is a bug in the "
                                      "policy, please report it with the trace");
    }
    ++r.instants;
    while (!ending.empty() && std::get<0>(ending.top()) == now) {
      const int job = std::get<2>(ending.top());
      ending.pop();
      busy -= jobs[static_cast<size_t>(job)].gpus;
      GLEANER_RETURN_IF_ERROR(policy.Finished(job, now));
    }
    while (next_arrival < arrivals.size() &&
           jobs[static_cast<size_t>(arrivals[next_arrival])].submit_s == now) {
      GLEANER_RETURN_IF_ERROR(policy.Submitted(arrivals[next_arrival], now));
      ++next_arrival;
    }
    started.clear();
    GLEANER_RETURN_IF_ERROR(policy.Dispatch(now, &started));
    for (int job : started) {
      const TraceJob& j = jobs[static_cast<size_t>(job)];
      const int64_t duration =
          r.cost ? RunTime(j, policy.PriceOf(job), mean_speed, &*r.cost) : j.duration_s;
      r.outcomes[static_cast<size_t>(job)] = {now, now + duration};
      ending.emplace(now + duration, start_seq++, job);
      busy += j.gpus;
    }
    const int queued = static_cast<int>(policy.queued());
    if (r.timeline.empty() || r.timeline.back().busy_gpus != busy ||
        r.timeline.back().queued_jobs != queued) {
      r.timeline.push_back({now, busy, queued});
    }
    const bool stuck = ending.empty() && next_arrival == arrivals.size() && queued > 0;
    idle_instants = stuck ? idle_instants + 1 : 0;
    // One full pass (a tick) on an idle cluster starts whatever fits; a
    // second that starts nothing means nothing ever will.
    wakeup = idle_instants > 2 ? std::nullopt : policy.NextWakeup(now);
  }
  r.gangs_started = policy.gangs_started();
  return r;
}

}  // namespace gleaner::sim
