#include "sched/scenario_runner.h"

#include <cmath>

namespace gleaner::sched {
namespace {

using nlohmann::json;

core::Status Bad(const std::string& where, const std::string& what) {
  return core::InvalidArgument(where + ": " + what);
}

core::Result<core::Duration> SecondsField(const json& j, const char* key,
                                          const std::string& where) {
  const json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
    return Bad(where + "." + key, "a non-negative number of seconds");
  }
  return core::Duration(static_cast<int64_t>(std::llround(v.get<double>() * 1e6)));
}

core::Result<PriorityClass> ClassFromName(const std::string& name) {
  if (name == "critical") return PriorityClass::kCritical;
  if (name == "normal") return PriorityClass::kNormal;
  if (name == "opportunistic") return PriorityClass::kOpportunistic;
  return Bad("priority_class", "one of critical, normal, opportunistic; got \"" + name + "\"");
}

core::Result<ProjectQuota> QuotaFromJson(const json& j, const std::string& where) {
  if (!j.is_object())
    return Bad(where, "an object with guaranteed_gpus, borrow_limit_gpus, weight");
  ProjectQuota q;
  try {
    if (j.contains("guaranteed_gpus")) q.guaranteed_gpus = j.at("guaranteed_gpus").get<int>();
    if (j.contains("borrow_limit_gpus") && !j.at("borrow_limit_gpus").is_null()) {
      q.borrow_limit_gpus = j.at("borrow_limit_gpus").get<int>();
    }
    if (j.contains("weight")) q.weight = j.at("weight").get<double>();
  } catch (const json::exception& e) {
    return Bad(where, std::string("wrong type: ") + e.what());
  }
  return q;
}

// {"name", "project", "gpus", "gpu_model", "starts_at_s", "ends_at_s"};
// times count from the scenario's epoch.
core::Result<Reservation> ReservationFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return Bad(where, "an object with name, project, gpus");
  static const std::set<std::string> kFields = {"name",      "project",     "gpus",
                                                "gpu_model", "starts_at_s", "ends_at_s"};
  for (const auto& [key, unused] : j.items()) {
    if (!kFields.contains(key)) return Bad(where + "." + key, "unknown field of a reservation");
  }
  Reservation r;
  try {
    r.name = j.value("name", "");
    r.project = j.value("project", "");
    r.gpus = j.value("gpus", 1);
    r.gpu_model = j.value("gpu_model", "");
    if (j.contains("starts_at_s")) {
      GLEANER_ASSIGN_OR_RETURN(const core::Duration d, SecondsField(j, "starts_at_s", where));
      r.starts_at = kScenarioEpoch + d;
    }
    if (j.contains("ends_at_s")) {
      GLEANER_ASSIGN_OR_RETURN(const core::Duration d, SecondsField(j, "ends_at_s", where));
      r.ends_at = kScenarioEpoch + d;
    }
  } catch (const json::exception& e) {
    return Bad(where, std::string("wrong type: ") + e.what());
  }
  return r;
}

core::Status ConfigFromJson(const json& j, Scenario* s) {
  if (!j.is_object()) return Bad("config", "an object");
  try {
    if (j.contains("min_runtime_s")) {
      GLEANER_ASSIGN_OR_RETURN(s->config.min_runtime, SecondsField(j, "min_runtime_s", "config"));
    }
    if (j.contains("usage_half_life_s")) {
      GLEANER_ASSIGN_OR_RETURN(s->config.usage_half_life,
                               SecondsField(j, "usage_half_life_s", "config"));
    }
    if (j.contains("age_horizon_s")) {
      GLEANER_ASSIGN_OR_RETURN(s->config.weights.age_horizon,
                               SecondsField(j, "age_horizon_s", "config"));
    }
    if (j.contains("priority_weight"))
      s->config.weights.priority = j.at("priority_weight").get<double>();
    if (j.contains("age_weight")) s->config.weights.age = j.at("age_weight").get<double>();
    if (j.contains("fair_share_weight")) {
      s->config.weights.fair_share = j.at("fair_share_weight").get<double>();
    }
    if (j.contains("ordering")) s->ordering = j.at("ordering").get<std::string>();
    if (j.contains("backfill")) s->config.backfill = j.at("backfill").get<bool>();
    if (j.contains("victims")) s->victims = j.at("victims").get<std::string>();
    if (j.contains("scorer")) s->scorer = j.at("scorer").get<std::string>();
    if (j.contains("projects")) {
      for (const auto& [name, q] : j.at("projects").items()) {
        GLEANER_ASSIGN_OR_RETURN(s->config.projects[name],
                                 QuotaFromJson(q, "config.projects." + name));
      }
    }
    if (j.contains("reservations")) {
      const json& list = j.at("reservations");
      if (!list.is_array()) return Bad("config.reservations", "a list of reservations");
      for (size_t i = 0; i < list.size(); ++i) {
        GLEANER_ASSIGN_OR_RETURN(
            Reservation r,
            ReservationFromJson(list[i], "config.reservations[" + std::to_string(i) + "]"));
        s->config.reservations.push_back(std::move(r));
      }
    }
    if (j.contains("user_weights")) {
      s->config.user_weights = j.at("user_weights").get<std::map<std::string, double>>();
    }
  } catch (const json::exception& e) {
    return Bad("config", std::string("wrong type: ") + e.what());
  }
  return core::Status::Ok();
}

core::Result<Event> EventFromStep(const json& step, const std::string& where) {
  static const char* kKinds[] = {"submit",    "cancel",     "finish",          "fail",
                                 "resized",   "checkpoint", "verdict",         "add_node",
                                 "lose_node", "reserve",    "end_reservation", "tick"};
  const char* kind = nullptr;
  for (const char* k : kKinds) {
    if (!step.contains(k)) continue;
    if (kind) return Bad(where, std::string("one event per step; both ") + kind + " and " + k);
    kind = k;
  }
  if (!kind) {
    return Bad(where,
               "needs one of submit, cancel, finish, fail, resized, checkpoint, verdict, "
               "add_node, lose_node, reserve, end_reservation, tick");
  }
  const json& v = step.at(kind);
  const std::string k = kind;
  try {
    if (k == "submit") {
      auto job = JobRequestFromJson(v);
      if (!job.ok()) return job.status().WithContext(where + ".submit");
      return Event(JobSubmitted{*job});
    }
    if (k == "cancel") return Event(JobCancelled{v.get<JobId>()});
    if (k == "finish") return Event(JobFinished{v.get<JobId>()});
    if (k == "checkpoint") return Event(JobCheckpointed{v.get<JobId>()});
    if (k == "resized") return Event(JobResized{v.get<JobId>()});
    if (k == "fail") {
      if (v.is_number_integer()) return Event(JobFailed{v.get<JobId>(), ""});
      return Event(JobFailed{v.at("id").get<JobId>(), v.value("reason", "")});
    }
    if (k == "verdict") {
      const std::string node = v.at("node").get<std::string>();
      const int gpu = v.at("gpu").get<int>();
      return Event(GpuVerdictChanged{core::GpuUuid("GPU-" + node + "-" + std::to_string(gpu)),
                                     v.at("lendable").get<bool>(),
                                     v.value("reason", ""),
                                     {}});
    }
    if (k == "add_node") {
      auto node = NodeSpecFromJson(v);
      if (!node.ok()) return node.status().WithContext(where + ".add_node");
      return Event(NodeAdded{*node});
    }
    if (k == "reserve") {
      GLEANER_ASSIGN_OR_RETURN(Reservation r, ReservationFromJson(v, where + ".reserve"));
      return Event(ReservationStarted{std::move(r)});
    }
    if (k == "end_reservation") return Event(ReservationEnded{v.get<std::string>()});
    if (k == "lose_node") {
      return Event(NodeLost{core::NodeId(v.at("node").get<std::string>()), v.value("reason", "")});
    }
    return Event(Tick{});
  } catch (const json::exception& e) {
    return Bad(where + "." + k, std::string("wrong shape: ") + e.what());
  }
}

}  // namespace

core::Result<JobRequest> JobRequestFromJson(const json& j) {
  if (!j.is_object()) return Bad("job", "an object");
  static const std::set<std::string> kFields = {
      "id",          "project",        "user",
      "gpus",        "gpu_milli",      "min_gpu_memory_gib",
      "gpu_models",  "priority_class", "priority",
      "preemptible", "checkpoints",    "expected_runtime_s",
      "max_gpus",    "can_shrink",     "nodes",
      "one_rack"};
  for (const auto& [key, unused] : j.items()) {
    if (!kFields.contains(key)) return Bad(key, "unknown field of a job");
  }
  JobRequest r;
  try {
    if (!j.contains("id") || !j.at("id").is_number_integer())
      return Bad("id", "required, an integer");
    r.id = j.at("id").get<JobId>();
    r.project = j.value("project", "");
    r.user = j.value("user", "");
    r.gpus = j.value("gpus", 1);
    r.max_gpus = j.value("max_gpus", 0);
    r.can_shrink = j.value("can_shrink", false);
    r.nodes = j.value("nodes", 1);
    r.one_rack = j.value("one_rack", false);
    r.gpu_milli = j.value("gpu_milli", kMilliPerGpu);
    if (j.contains("min_gpu_memory_gib")) {
      r.min_gpu_memory = core::Bytes::GiB(j.at("min_gpu_memory_gib").get<uint64_t>());
    }
    r.gpu_models = j.value("gpu_models", std::vector<std::string>{});
    if (j.contains("priority_class")) {
      GLEANER_ASSIGN_OR_RETURN(r.priority_class,
                               ClassFromName(j.at("priority_class").get<std::string>()));
    }
    r.priority = j.value("priority", 0);
    r.preemptible = j.value("preemptible", true);
    r.checkpoints = j.value("checkpoints", false);
    if (j.contains("expected_runtime_s")) {
      GLEANER_ASSIGN_OR_RETURN(r.expected_runtime, SecondsField(j, "expected_runtime_s", "job"));
    }
  } catch (const json::exception& e) {
    return Bad("job", std::string("wrong type: ") + e.what());
  }
  return r;
}

core::Result<NodeSpec> NodeSpecFromJson(const json& j) {
  if (!j.is_object()) return Bad("node", "an object");
  NodeSpec n;
  try {
    n.id = core::NodeId(j.at("id").get<std::string>());
    n.rack = j.value("rack", "");
    const int count = j.at("gpus").get<int>();
    if (count < 1 || count > 64) return Bad("gpus", "1..64 GPUs per node");
    const std::string model = j.value("model", "NVIDIA A100-SXM4-80GB");
    const core::Bytes memory = core::Bytes::GiB(j.value("memory_gib", uint64_t{80}));
    for (int i = 0; i < count; ++i) {
      n.gpus.push_back({core::GpuUuid("GPU-" + n.id.str() + "-" + std::to_string(i)),
                        i,
                        model,
                        memory,
                        -1,
                        true,
                        {}});
    }
    if (j.contains("nvlink_islands")) {
      int island = 0;
      for (const json& members : j.at("nvlink_islands")) {
        for (const json& m : members) {
          const int i = m.get<int>();
          if (i < 0 || i >= count) return Bad("nvlink_islands", "GPU index out of range");
          n.gpus[static_cast<size_t>(i)].nvlink_island = island;
        }
        ++island;
      }
    }
    for (const json& i : j.value("not_lendable", json::array())) {
      const int g = i.get<int>();
      if (g < 0 || g >= count) return Bad("not_lendable", "GPU index out of range");
      n.gpus[static_cast<size_t>(g)].lendable = false;
    }
  } catch (const json::exception& e) {
    return Bad("node", std::string("wrong shape: ") + e.what());
  }
  return n;
}

core::Result<Scenario> ScenarioFromJson(const json& j) {
  if (!j.is_object()) return Bad("scenario", "an object with nodes and steps");
  Scenario s;
  s.description = j.value("description", "");
  if (j.contains("config")) GLEANER_RETURN_IF_ERROR(ConfigFromJson(j.at("config"), &s));
  if (j.contains("nodes")) {
    for (size_t i = 0; i < j.at("nodes").size(); ++i) {
      auto node = NodeSpecFromJson(j.at("nodes")[i]);
      if (!node.ok()) return node.status().WithContext("nodes[" + std::to_string(i) + "]");
      s.steps.push_back(
          {kScenarioEpoch, NodeAdded{*node}, {}, {}, {}, "nodes[" + std::to_string(i) + "]"});
    }
  }
  if (!j.contains("steps") || !j.at("steps").is_array()) return Bad("steps", "required, a list");
  const json& steps = j.at("steps");
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string where = "steps[" + std::to_string(i) + "]";
    const json& step = steps[i];
    if (!step.is_object()) return Bad(where, "an object");
    ScenarioStep out;
    out.where = where;
    GLEANER_ASSIGN_OR_RETURN(out.event, EventFromStep(step, where));
    try {
      core::Duration at{};
      if (step.contains("at_s")) {
        GLEANER_ASSIGN_OR_RETURN(at, SecondsField(step, "at_s", where));
      }
      out.at = kScenarioEpoch + at;
      out.expect = step.value("expect", std::vector<std::string>{});
      const json pending = step.value("pending", json::object());
      for (const auto& [id, reason] : pending.items()) {
        out.pending[std::stoll(id)] = reason.get<std::string>();
      }
      if (step.contains("expect_error"))
        out.expect_error = step.at("expect_error").get<std::string>();
    } catch (const std::exception& e) {
      return Bad(where, std::string("wrong shape: ") + e.what());
    }
    s.steps.push_back(std::move(out));
  }
  return s;
}

core::Result<std::unique_ptr<Scheduler>> MakeScenarioScheduler(const Scenario& s) {
  SchedulerPolicies p;
  if (s.ordering == "fifo") {
    p.ordering = std::make_unique<PriorityFifoOrdering>();
  } else if (s.ordering == "multifactor") {
    p.ordering = std::make_unique<MultifactorOrdering>(s.config.weights);
  } else {
    return Bad("config.ordering", "fifo or multifactor; got \"" + s.ordering + "\"");
  }
  p.victims = MakeVictimSelector(s.victims);
  if (!p.victims) {
    return Bad("config.victims", "least-work-lost or lowest-priority; got \"" + s.victims + "\"");
  }
  p.scorer = MakePlacementScorer(s.scorer);
  if (!p.scorer) return Bad("config.scorer", "bestfit or gleaner; got \"" + s.scorer + "\"");
  return std::make_unique<Scheduler>(s.config, std::move(p));
}

std::vector<std::string> CheckScenario(const Scenario& s) {
  std::vector<std::string> failures;
  auto made = MakeScenarioScheduler(s);
  if (!made.ok()) return {made.status().ToString()};
  if (core::Status config = Scheduler::CheckConfig(s.config); !config.ok()) {
    return {config.ToString()};
  }
  Scheduler& sched = **made;
  for (const ScenarioStep& step : s.steps) {
    auto actions = sched.Handle(step.event, step.at);
    if (!actions.ok()) {
      if (!step.expect_error ||
          actions.status().message().find(*step.expect_error) == std::string::npos) {
        failures.push_back(step.where + ": unexpected error: " + actions.status().ToString());
      }
      continue;
    }
    if (step.expect_error) {
      failures.push_back(step.where + ": expected an error containing \"" + *step.expect_error +
                         "\", got none");
    }
    std::vector<std::string> got;
    for (const Action& a : *actions) got.push_back(ToString(a));
    if (got != step.expect) {
      std::string msg = step.where + ": actions differ\n  expected:";
      for (const std::string& e : step.expect) msg += "\n    " + e;
      msg += "\n  got:";
      for (const std::string& g : got) msg += "\n    " + g;
      failures.push_back(msg);
    }
    for (const auto& [id, want] : step.pending) {
      auto reason = sched.PendingReason(id);
      const std::string have = reason.ok() ? *reason : reason.status().ToString();
      if (have != want) {
        failures.push_back(step.where + ": job " + std::to_string(id) + " waits for\n    \"" +
                           have + "\"\n  expected\n    \"" + want + "\"");
      }
    }
  }
  return failures;
}

}  // namespace gleaner::sched
