#include "sched/reservation.h"

#include <algorithm>
#include <tuple>

namespace gleaner::sched {

core::Status ValidateReservation(const Reservation& r) {
  if (r.name.empty())
    return core::InvalidArgument("reservation: a name is required, like \"vision-nightly\"");
  const std::string where = "reservation " + r.name + ": ";
  if (r.project.empty()) {
    return core::InvalidArgument(where + "name the project it holds GPUs for");
  }
  if (r.gpus < 1) {
    return core::InvalidArgument(where + "gpus: at least 1; got " + std::to_string(r.gpus));
  }
  if (r.starts_at && r.ends_at && *r.ends_at <= *r.starts_at) {
    return core::InvalidArgument(where +
                                 "ends at or before it starts; give an end after the start");
  }
  return core::Status::Ok();
}

core::Status ReservationBook::Add(const Reservation& r, core::TimePoint now) {
  GLEANER_RETURN_IF_ERROR(ValidateReservation(r));
  if (by_name_.contains(r.name)) {
    return core::InvalidArgument("reservation " + r.name +
                                 " exists already; end it first or choose another name");
  }
  if (r.ends_at && *r.ends_at <= now) {
    return core::FailedPrecondition("reservation " + r.name +
                                    " ends before now; give an end in the future");
  }
  const auto s = static_cast<Slot>(slots_.size());
  slots_.push_back({r, false, false, {}});
  by_name_.emplace(r.name, s);
  if (!r.starts_at || *r.starts_at <= now) Activate(slots_.back());
  return core::Status::Ok();
}

core::Status ReservationBook::End(const std::string& name) {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return core::NotFound("no reservation " + name + " to end");
  Entry& e = slots_[static_cast<size_t>(it->second)];
  Deactivate(e);
  e.over = true;
  by_name_.erase(it);
  return core::Status::Ok();
}

bool ReservationBook::Advance(core::TimePoint now) {
  bool changed = false;
  for (auto it = by_name_.begin(); it != by_name_.end();) {
    Entry& e = slots_[static_cast<size_t>(it->second)];
    if (e.r.ends_at && *e.r.ends_at <= now) {
      changed = changed || e.active;
      Deactivate(e);
      e.over = true;
      it = by_name_.erase(it);
      continue;
    }
    if (!e.active && (!e.r.starts_at || *e.r.starts_at <= now)) {
      Activate(e);
      changed = true;
    }
    ++it;
  }
  return changed;
}

void ReservationBook::Activate(Entry& e) {
  if (e.active) return;
  e.active = true;
  ++active_;
}

void ReservationBook::Deactivate(Entry& e) {
  if (!e.active) return;
  for (GpuIndex g : e.gpus) holder_[g] = kNone;
  e.gpus.clear();
  e.active = false;
  --active_;
}

bool ReservationBook::short_of_gpus() const {
  for (const auto& [name, s] : by_name_) {
    const Entry& e = slots_[static_cast<size_t>(s)];
    if (e.active && static_cast<int>(e.gpus.size()) < e.r.gpus) return true;
  }
  return false;
}

bool ReservationBook::TopUp(
    const ClusterState& cluster,
    const std::function<GpuStanding(GpuIndex, const std::string&)>& standing) {
  bool pinned = false;
  // In the order they were added: an earlier reservation chooses first.
  for (Slot s : Active()) {
    const size_t before = gpus(s).size();
    Pin(s, cluster, standing);
    pinned = pinned || gpus(s).size() != before;
  }
  return pinned;
}

void ReservationBook::Pin(
    Slot s, const ClusterState& cluster,
    const std::function<GpuStanding(GpuIndex, const std::string&)>& standing) {
  Entry& e = slots_[static_cast<size_t>(s)];
  int need = e.r.gpus - static_cast<int>(e.gpus.size());
  if (need <= 0) return;
  // Per node the GPUs it could pin, best first: free and lendable (nobody
  // is displaced), then lendable but held by jobs the owner may reclaim,
  // then GPUs their hardware owner uses now (lendable again later).
  struct Candidates {
    NodeIndex node = 0;
    bool holds_some = false;
    int free = 0;
    std::vector<std::pair<int, GpuIndex>> gpus;  // (rank, gpu)
  };
  std::vector<Candidates> nodes;
  for (NodeIndex n = 0; n < cluster.node_count(); ++n) {
    const NodeState& node = cluster.node(n);
    if (!node.alive) continue;
    Candidates c;
    c.node = n;
    for (GpuIndex g : node.gpus) {
      if (HolderOf(g) == s) c.holds_some = true;
      if (HolderOf(g) != kNone) continue;
      const GpuState& gpu = cluster.gpu(g);
      if (!e.r.gpu_model.empty() && gpu.spec.model.find(e.r.gpu_model) == std::string::npos) {
        continue;
      }
      const GpuStanding st = standing(g, e.r.project);
      if (st == GpuStanding::kUnavailable) continue;
      const int rank = !gpu.spec.lendable ? 2 : st == GpuStanding::kFree ? 0 : 1;
      c.free += rank == 0;
      c.gpus.emplace_back(rank, g);
    }
    if (!c.gpus.empty()) nodes.push_back(std::move(c));
  }
  // Keep a reservation on one node where it can be (the owner's gangs need
  // that), on the node with the most free candidates, lowest index first.
  std::sort(nodes.begin(), nodes.end(), [need](const Candidates& a, const Candidates& b) {
    const bool a_holds = static_cast<int>(a.gpus.size()) >= need;
    const bool b_holds = static_cast<int>(b.gpus.size()) >= need;
    return std::tuple(!a.holds_some, !a_holds, -a.free, a.node) <
           std::tuple(!b.holds_some, !b_holds, -b.free, b.node);
  });
  for (Candidates& c : nodes) {
    std::stable_sort(c.gpus.begin(), c.gpus.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [rank, g] : c.gpus) {
      if (need == 0) break;
      if (holder_.size() <= g) holder_.resize(g + 1, kNone);
      holder_[g] = s;
      e.gpus.push_back(g);
      --need;
    }
    if (need == 0) break;
  }
  std::sort(e.gpus.begin(), e.gpus.end());
}

void ReservationBook::ForgetNode(const ClusterState& cluster, NodeIndex n) {
  for (GpuIndex g : cluster.node(n).gpus) {
    const Slot s = HolderOf(g);
    if (s == kNone) continue;
    holder_[g] = kNone;
    auto& held = slots_[static_cast<size_t>(s)].gpus;
    held.erase(std::find(held.begin(), held.end(), g));
  }
}

std::optional<ReservationBook::Slot> ReservationBook::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<ReservationBook::Slot> ReservationBook::Active() const {
  std::vector<Slot> out;
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s].active) out.push_back(static_cast<Slot>(s));
  }
  return out;
}

bool ReservationBook::OwnsActive(const std::string& project) const {
  for (const Entry& e : slots_) {
    if (e.active && e.r.project == project) return true;
  }
  return false;
}

}  // namespace gleaner::sched
