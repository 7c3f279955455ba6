#include "sched/pending_queue.h"

#include <algorithm>

namespace gleaner::sched {

int PendingQueue::GroupOf(const JobRequest& req, int kind) {
  auto [it, added] = group_ids_.try_emplace(
      GroupKey{ClassRank(req.priority_class), req.priority, req.project, req.user, kind},
      static_cast<int>(groups_.size()));
  if (!added) return it->second;
  const auto number = [](std::map<std::string, int>& ids, std::vector<const std::string*>& names,
                         const std::string& name) {
    auto [id, fresh] = ids.try_emplace(name, static_cast<int>(names.size()));
    if (fresh) names.push_back(&id->first);
    return id->second;
  };
  Group& g = groups_.emplace_back();
  g.project = number(project_ids_, project_names_, req.project);
  g.user = number(user_ids_, user_names_, req.user);
  if (projects_.size() < project_names_.size()) {
    projects_.emplace_back().keyed_at = keyed_at_;
    skipped_in_walk_.push_back(0);
  }
  entered_in_walk_.push_back(0);
  return it->second;
}

void PendingQueue::Add(int group, const JobRequest& req, core::TimePoint submitted_at,
                       const OrderKey& key) {
  fresh_.emplace(key, Slot{group, {submitted_at, req.id, &req}});
  ++size_;
}

void PendingQueue::Remove(int group, const JobRequest& req, core::TimePoint submitted_at,
                          const OrderKey& key) {
  if (fresh_.erase(key) > 0) {
    --size_;
    return;
  }
  Group& g = groups_[static_cast<size_t>(group)];
  std::map<OrderKey, Slot>& heads = projects_[static_cast<size_t>(g.project)].heads;
  const Member m{submitted_at, req.id, &req};
  const auto it = g.filed.find(m);
  if (it == g.filed.end()) return;
  const bool was_first = it == g.filed.begin();
  if (was_first) heads.erase(FiledKey(g, *it));
  g.filed.erase(it);
  --size_;
  if (was_first && !g.filed.empty()) {
    heads.emplace(FiledKey(g, *g.filed.begin()), Slot{group, *g.filed.begin()});
  }
}

OrderKey PendingQueue::KeyOf(int group, const JobRequest& req, core::TimePoint submitted_at,
                             const OrderKey& added_with) const {
  if (fresh_.contains(added_with)) return added_with;
  return FiledKey(groups_[static_cast<size_t>(group)], {submitted_at, req.id, &req});
}

void PendingQueue::Rekey(core::TimePoint now, const Factor& project_factor,
                         const Factor& user_factor, const HasRoom& has_room) {
  keyed_at_ = now;
  passed_over_.clear();
  for (size_t p = 0; p < projects_.size(); ++p) {
    projects_[p].keyed = !has_room || has_room(*project_names_[p]);
    if (!projects_[p].keyed) passed_over_.push_back(static_cast<int>(p));
  }
  // File the fresh jobs. A passed-over project's heads keep their old keys
  // (its keyed_at), so a head that changes is re-keyed as of then.
  std::vector<std::vector<int>> newly_filled(projects_.size());
  for (auto& [key, slot] : fresh_) {
    Group& g = groups_[static_cast<size_t>(slot.group)];
    Project& project = projects_[static_cast<size_t>(g.project)];
    const bool first = g.filed.empty() || slot.member < *g.filed.begin();
    if (project.keyed) {
      if (g.filed.empty()) newly_filled[static_cast<size_t>(g.project)].push_back(slot.group);
    } else if (first) {
      if (!g.filed.empty()) project.heads.erase(FiledKey(g, *g.filed.begin()));
      project.heads.emplace(FiledKey(g, slot.member), Slot{slot.group, slot.member});
    }
    g.filed.insert(slot.member);
  }
  fresh_.clear();
  // Each account's factor is asked once.
  std::vector<double> project_factors(project_names_.size(), -1);
  std::vector<double> user_factors(user_names_.size(), -1);
  const auto memo = [](std::vector<double>& known, const std::vector<const std::string*>& names,
                       const Factor& ask) {
    return [&known, &names, &ask](int account) {
      double& f = known[static_cast<size_t>(account)];
      if (f < 0) f = ask(*names[static_cast<size_t>(account)]);
      return f;
    };
  };
  const FactorOf project_of = memo(project_factors, project_names_, project_factor);
  const FactorOf user_of = memo(user_factors, user_names_, user_factor);
  for (size_t p = 0; p < projects_.size(); ++p) {
    if (projects_[p].keyed) KeyProject(projects_[p], newly_filled[p], project_of, user_of);
  }
}

void PendingQueue::KeyProjectsWithRoom(const Factor& project_factor, const Factor& user_factor,
                                       const HasRoom& has_room) {
  const FactorOf project_of = [&](int account) {
    return project_factor(*project_names_[static_cast<size_t>(account)]);
  };
  const FactorOf user_of = [&](int account) {
    return user_factor(*user_names_[static_cast<size_t>(account)]);
  };
  std::erase_if(passed_over_, [&](int p) {
    if (!has_room(*project_names_[static_cast<size_t>(p)])) return false;
    Project& project = projects_[static_cast<size_t>(p)];
    project.keyed = true;
    KeyProject(project, {}, project_of, user_of);
    return true;
  });
}

void PendingQueue::KeyProject(Project& project, const std::vector<int>& newly_filled,
                              const FactorOf& project_factor, const FactorOf& user_factor) {
  project.keyed_at = keyed_at_;
  // The heads' tree nodes are reused.
  std::vector<std::map<OrderKey, Slot>::node_type> nodes;
  nodes.reserve(project.heads.size());
  while (!project.heads.empty()) nodes.push_back(project.heads.extract(project.heads.begin()));
  const auto key = [&](int group) {
    Group& g = groups_[static_cast<size_t>(group)];
    g.project_factor = project_factor(g.project);
    g.user_factor = user_factor(g.user);
    return std::pair{FiledKey(g, *g.filed.begin()), Slot{group, *g.filed.begin()}};
  };
  for (auto& node : nodes) {
    std::tie(node.key(), node.mapped()) = key(node.mapped().group);
    project.heads.insert(std::move(node));
  }
  for (int group : newly_filled) project.heads.insert(key(group));
}

std::optional<OrderKey> PendingQueue::Front() const {
  std::optional<OrderKey> front;
  if (!fresh_.empty()) front = fresh_.begin()->first;
  for (const Project& p : projects_) {
    if (p.keyed && !p.heads.empty() && (!front || p.heads.begin()->first < *front)) {
      front = p.heads.begin()->first;
    }
  }
  return front;
}

OrderKey PendingQueue::FiledKey(const Group& group, const Member& m) const {
  const core::TimePoint at = projects_[static_cast<size_t>(group.project)].keyed_at;
  OrderKey key =
      ordering_->Key({m.req, m.submitted_at, at, group.project_factor, group.user_factor});
  key.id = m.id;
  return key;
}

std::optional<std::pair<OrderKey, PendingQueue::Slot>> PendingQueue::After(int group,
                                                                           const Member& m) const {
  const Group& g = groups_[static_cast<size_t>(group)];
  const auto next = g.filed.upper_bound(m);
  if (next == g.filed.end()) return std::nullopt;
  return std::pair{FiledKey(g, *next), Slot{group, *next}};
}

namespace {
constexpr auto kLater = [](const auto& a, const auto& b) { return b.key < a.key; };
}  // namespace

PendingQueue::Walk::Walk(const PendingQueue& queue)
    : queue_(&queue), stamp_(++queue.walks_), fresh_(queue.fresh_.begin()) {
  for (const Project& p : queue.projects_) {
    if (p.keyed && !p.heads.empty()) {
      cursors_.push_back({p.heads.begin()->first, p.heads.begin(), p.heads.end()});
    }
  }
  std::make_heap(cursors_.begin(), cursors_.end(), kLater);
}

void PendingQueue::Walk::SkipRestOfProject() {
  if (last_group_ < 0) return;
  const int project = queue_->groups_[static_cast<size_t>(last_group_)].project;
  queue_->skipped_in_walk_[static_cast<size_t>(project)] = stamp_;
  advance_.reset();
}

std::optional<OrderKey> PendingQueue::Walk::Next() {
  const PendingQueue& q = *queue_;
  const auto later = [](const Entry& a, const Entry& b) { return b.first < a.first; };
  if (advance_) {
    if (auto next = q.After(advance_->group, advance_->member)) {
      heap_.push_back(std::move(*next));
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
    advance_.reset();
  }
  // What a skipped project still has in the walk is dropped as it comes up.
  while (!cursors_.empty() && Skipped(cursors_.front().at->second.group)) {
    std::pop_heap(cursors_.begin(), cursors_.end(), kLater);
    cursors_.pop_back();
  }
  while (!heap_.empty() && Skipped(heap_.front().second.group)) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  while (fresh_ != q.fresh_.end() && Skipped(fresh_->second.group)) ++fresh_;
  const bool fresh = fresh_ != q.fresh_.end();
  const bool head = !cursors_.empty();
  const bool heap = !heap_.empty();
  if (fresh && (!head || fresh_->first < cursors_.front().key) &&
      (!heap || fresh_->first < heap_.front().first)) {
    last_group_ = fresh_->second.group;
    return (fresh_++)->first;
  }
  Slot slot;
  OrderKey key;
  if (head && (!heap || cursors_.front().key < heap_.front().first)) {
    std::pop_heap(cursors_.begin(), cursors_.end(), kLater);
    Cursor& c = cursors_.back();
    key = c.key;
    slot = c.at->second;
    q.entered_in_walk_[static_cast<size_t>(slot.group)] = stamp_;
    // A group the walk entered goes on from the heap: its head (even a new
    // one, after its first job left) is passed over. Stepping over them at
    // once keeps every cursor on a head whose job is still waiting.
    do ++c.at;
    while (c.at != c.end && Entered(c.at->second.group));
    if (c.at == c.end) {
      cursors_.pop_back();
    } else {
      c.key = c.at->first;
      std::push_heap(cursors_.begin(), cursors_.end(), kLater);
    }
  } else if (heap) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    key = heap_.back().first;
    slot = heap_.back().second;
    heap_.pop_back();
  } else {
    return std::nullopt;
  }
  advance_ = slot;
  last_group_ = slot.group;
  return key;
}

}  // namespace gleaner::sched
