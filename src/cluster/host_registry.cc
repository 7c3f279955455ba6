#include "cluster/host_registry.h"

#include <algorithm>

#include "core/enum_names.h"
#include "core/format.h"

namespace gleaner::cluster {

constexpr auto kHealthNames = core::MakeEnumNames<HostView::Health>({
    {HostView::Health::kUp, "up"},
    {HostView::Health::kSilent, "silent"},
    {HostView::Health::kLost, "lost"},
});

std::string_view HealthName(HostView::Health h) { return kHealthNames.Name(h); }

void HostRegistry::Remember(const std::vector<store::GpuRecord>& gpus) {
  for (const store::GpuRecord& g : gpus) {
    host_of_gpu_[g.uuid] = g.host;
    awaited_.insert(g.host);
  }
}

KnownHost& HostRegistry::Heard(const std::string& name, core::TimePoint now, const Log& log) {
  KnownHost& host = hosts_[name];
  if (host.silent || host.lost) {
    log("host " + name + " reports again after " + core::FormatDuration(now - host.heard) +
        (host.lost ? " (it was lost: what was requeued stays requeued)" : ""));
  }
  host.heard = now;
  host.reported = true;
  host.silent = false;
  host.lost = false;
  host.retell = true;
  return host;
}

core::Result<bool> HostRegistry::LearnInventory(
    const std::string& name, KnownHost& host, std::vector<InventoryGpu> gpus,
    const std::string& rack, const sched::HostResources& resources, core::TimePoint now,
    std::vector<store::GpuRecord>* records, const Log& log) {
  if (gpus == host.gpus && rack == host.rack) {
    // Only its CPUs or memory changed (an agent upgraded or reconfigured):
    // never a reason to requeue its running jobs. The node keeps the size
    // it was placed with until it is placed anew.
    if (resources != host.resources) {
      host.resources = resources;
      if (host.in_scheduler)
        log("host " + name + " reports another size; it counts from its next placement");
    }
    return false;
  }
  if (max_gpus_per_host_ > 0 && gpus.size() > max_gpus_per_host_) {
    return core::PermissionDenied("host " + name + " reports " + std::to_string(gpus.size()) +
                                  " GPUs, more than the " + std::to_string(max_gpus_per_host_) +
                                  " one host may have here (gleaner server --max-gpus-per-host)");
  }
  // A GPU is the host's that reported it first, as the store remembers
  // across restarts and failovers: no agent takes another host's, even one
  // that has not reported since, or whose agent is gone (it would receive
  // the jobs placed there, and their users' environments). Only root moves
  // one (Forget).
  for (const InventoryGpu& g : gpus) {
    auto owner = host_of_gpu_.find(g.uuid);
    if (owner == host_of_gpu_.end() || owner->second == name) continue;
    return core::PermissionDenied(
        "GPU " + g.uuid.str() + " is already reported by host " + owner->second +
        ": a GPU stays with the host that reported it first (one agent per host, and simulated "
        "GPUs need UUIDs of their own). If it moved to " +
        name + ", an admin releases it on a coordinator: gleaner host forget " + owner->second);
  }
  // The GPUs a host joins with are its own; one it reports later waits for
  // root. Otherwise an agent could add GPUs it does not have, up to the
  // limit, and receive the jobs placed there with their users' environments.
  std::vector<InventoryGpu> fresh;
  for (const InventoryGpu& g : gpus) {
    if (!host_of_gpu_.contains(g.uuid)) fresh.push_back(g);
  }
  // (A scan of every GPU, only when one is new: at a host's first join.)
  if (!fresh.empty() && std::any_of(host_of_gpu_.begin(), host_of_gpu_.end(),
                                    [&](const auto& o) { return o.second == name; })) {
    std::string named;
    for (const InventoryGpu& g : fresh) named += (named.empty() ? "" : ", ") + g.uuid.str();
    if (host.unaccepted != fresh) {
      log("host " + name + " reports " + std::to_string(fresh.size()) +
          " GPU(s) it did not join with (" + named +
          "); refused until root accepts them: " + "gleaner host accept " + name);
    }
    host.unaccepted = std::move(fresh);
    return core::PermissionDenied(
        "host " + name + " reports " + std::to_string(host.unaccepted.size()) +
        " GPU(s) it did not join with (" + named +
        "): new GPUs wait for an admin, who accepts them on a coordinator: gleaner host accept " +
        name);
  }
  host.unaccepted.clear();
  host.rack = rack;
  host.resources = resources;
  for (const InventoryGpu& g : gpus) {
    host_of_gpu_[g.uuid] = name;
    records->push_back({g.uuid, name, static_cast<uint32_t>(g.index), g.model, g.memory, now, now});
  }
  log("host " + name + " has " + std::to_string(gpus.size()) + " GPU(s)" +
      (rack.empty() ? "" : " in rack " + rack));
  host.status.assign(gpus.size(), GpuStatus{});
  host.reasons.assign(gpus.size(), "");
  host.details.assign(gpus.size(), std::nullopt);
  host.gpus = std::move(gpus);
  return true;
}

core::Result<int64_t> HostRegistry::Accept(const std::string& name, store::ObservationStore& to,
                                           core::TimePoint now, const Log& log) {
  KnownHost* host = Find(name);
  if (host == nullptr || host->unaccepted.empty()) {
    return core::FailedPrecondition("host " + name +
                                    " has no new GPUs waiting: they wait here once its agent "
                                    "reports them to this coordinator");
  }
  std::vector<store::GpuRecord> records;
  std::string named;
  for (const InventoryGpu& g : host->unaccepted) {
    if (host_of_gpu_.contains(g.uuid)) continue;  // another host's since: stays so
    records.push_back({g.uuid, name, static_cast<uint32_t>(g.index), g.model, g.memory, now, now});
    named += (named.empty() ? "" : ", ") + g.uuid.str();
  }
  GLEANER_RETURN_IF_ERROR(to.SaveGpus(records));
  for (const store::GpuRecord& r : records) host_of_gpu_[r.uuid] = name;
  host->unaccepted.clear();
  log("host " + name + ": " + std::to_string(records.size()) + " new GPU(s) accepted" +
      (named.empty() ? "" : " (" + named + ")"));
  return static_cast<int64_t>(records.size());
}

core::Status HostRegistry::MayForget(const std::string& name) const {
  const KnownHost* host = Find(name);
  if (host == nullptr) return core::Status::Ok();
  if (!host->jobs.empty()) {
    return core::FailedPrecondition("host " + name + " holds " + std::to_string(host->jobs.size()) +
                                    " job(s): cancel them, or wait until they end");
  }
  if (host->Reporting()) {
    return core::FailedPrecondition(
        "host " + name + " reports now: stop its agent first (systemctl stop gleaner-agent)");
  }
  return core::Status::Ok();
}

std::optional<KnownHost> HostRegistry::Forget(const std::string& name) {
  std::erase_if(host_of_gpu_, [&](const auto& gpu) { return gpu.second == name; });
  awaited_.erase(name);
  auto known = hosts_.extract(name);
  if (!known) return std::nullopt;
  return std::move(known.mapped());
}

void HostRegistry::JudgeLiveness(core::TimePoint now, core::Duration silent_after,
                                 core::Duration requeue_after, const Log& log) {
  for (auto& [name, host] : hosts_) {
    const core::Duration quiet = now - host.heard;
    if (!host.silent && quiet > silent_after) {
      host.silent = true;
      host.retell = true;
      log("host " + name + " silent for " + core::FormatDuration(quiet) +
          ": its GPUs are unknown and lent to no one");
    }
    if (!host.lost && quiet > requeue_after) {
      host.lost = true;
      host.retell = true;
      log("host " + name + " lost: silent for " + core::FormatDuration(quiet) +
          "; its agent is stopping its jobs, which are requeued once their grace has passed");
    }
  }
}

bool HostRegistry::Settled(core::TimePoint now, core::TimePoint since, core::Duration wait,
                           const Log& log) {
  if (awaited_.empty()) return true;
  std::erase_if(awaited_, [&](const std::string& name) {
    const KnownHost* host = Find(name);
    // Heard, with its GPUs: a host's first report to a new leader may
    // carry none (the leader asks for them).
    return host != nullptr && host->reported && !host->gpus.empty();
  });
  if (awaited_.empty()) return true;
  if (now - since <= wait) return false;
  std::string names;
  for (const std::string& n : awaited_) names += (names.empty() ? "" : ", ") + n;
  log("placing jobs without host(s) " + names + ", silent since this coordinator began to lead");
  awaited_.clear();
  return true;
}

KnownHost* HostRegistry::Find(const std::string& name) {
  const auto it = hosts_.find(name);
  return it == hosts_.end() ? nullptr : &it->second;
}

const KnownHost* HostRegistry::Find(const std::string& name) const {
  const auto it = hosts_.find(name);
  return it == hosts_.end() ? nullptr : &it->second;
}

KnownHost* HostRegistry::OfGpu(const core::GpuUuid& gpu, core::TimePoint now) {
  const std::string* name = NameOf(gpu);
  if (name == nullptr) return nullptr;
  auto [host, added] = hosts_.try_emplace(*name);
  if (added) host->second.heard = now;
  return &host->second;
}

const std::string* HostRegistry::NameOf(const core::GpuUuid& gpu) const {
  const auto at = host_of_gpu_.find(gpu);
  return at == host_of_gpu_.end() ? nullptr : &at->second;
}

std::vector<std::string> HostRegistry::HostsOf(const store::JobRecord& job) const {
  std::vector<std::string> names;
  for (const core::GpuUuid& g : job.gpus) {
    const std::string* at = NameOf(g);
    if (at == nullptr) return {};
    if (std::find(names.begin(), names.end(), *at) == names.end()) names.push_back(*at);
  }
  return names;
}

bool HostRegistry::OnHost(const std::string& name, const store::JobRecord& job) const {
  return std::any_of(job.gpus.begin(), job.gpus.end(), [&](const core::GpuUuid& g) {
    const std::string* at = NameOf(g);
    return at != nullptr && *at == name;
  });
}

std::vector<HostView> HostRegistry::Views(bool with_details) const {
  std::vector<HostView> out;
  for (const auto& [name, host] : hosts_) {
    HostView v;
    v.name = name;
    v.health = host.lost     ? HostView::Health::kLost
               : host.silent ? HostView::Health::kSilent
                             : HostView::Health::kUp;
    if (host.reported) v.last_report = host.heard;
    v.gpus = host.gpus;
    v.status = host.status;
    v.reasons = host.reasons;
    if (with_details) v.details = host.details;
    v.jobs = static_cast<int>(host.jobs.size());
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace gleaner::cluster
