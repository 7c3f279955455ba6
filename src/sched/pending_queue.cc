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
  const Member m{submitted_at, req.id, &req};
  const auto it = g.filed.find(m);
  if (it == g.filed.end()) return;
  const bool was_first = it == g.filed.begin();
  if (was_first) heads_.erase(FiledKey(g, *it));
  g.filed.erase(it);
  --size_;
  if (was_first && !g.filed.empty()) {
    heads_.emplace(FiledKey(g, *g.filed.begin()), Slot{group, *g.filed.begin()});
  }
}

OrderKey PendingQueue::KeyOf(int group, const JobRequest& req, core::TimePoint submitted_at,
                             const OrderKey& added_with) const {
  if (fresh_.contains(added_with)) return added_with;
  return FiledKey(groups_[static_cast<size_t>(group)], {submitted_at, req.id, &req});
}

void PendingQueue::Rekey(core::TimePoint now, const Factor& project_factor,
                         const Factor& user_factor) {
  keyed_at_ = now;
  // Only groups with jobs are touched, each account's factor is asked
  // once, and the heads' tree nodes are reused.
  std::vector<decltype(heads_)::node_type> nodes;
  nodes.reserve(heads_.size() + fresh_.size());
  while (!heads_.empty()) nodes.push_back(heads_.extract(heads_.begin()));
  std::vector<int> groups;
  groups.reserve(nodes.size() + fresh_.size());
  for (const auto& node : nodes) groups.push_back(node.mapped().group);
  for (auto& [key, slot] : fresh_) {
    std::set<Member>& filed = groups_[static_cast<size_t>(slot.group)].filed;
    if (filed.empty()) groups.push_back(slot.group);
    filed.insert(slot.member);
  }
  fresh_.clear();
  std::vector<double> project_factors(project_names_.size(), -1);
  std::vector<double> user_factors(user_names_.size(), -1);
  const auto factor = [](std::vector<double>& known, const std::vector<const std::string*>& names,
                         const Factor& ask, int account) {
    double& f = known[static_cast<size_t>(account)];
    if (f < 0) f = ask(*names[static_cast<size_t>(account)]);
    return f;
  };
  for (size_t i = 0; i < groups.size(); ++i) {
    Group& g = groups_[static_cast<size_t>(groups[i])];
    const Member& first = *g.filed.begin();
    g.project_factor = factor(project_factors, project_names_, project_factor, g.project);
    g.user_factor = factor(user_factors, user_names_, user_factor, g.user);
    if (i >= nodes.size()) {
      heads_.emplace(FiledKey(g, first), Slot{groups[i], first});
      continue;
    }
    nodes[i].key() = FiledKey(g, first);
    nodes[i].mapped() = Slot{groups[i], first};
    heads_.insert(std::move(nodes[i]));
  }
}

std::optional<OrderKey> PendingQueue::Front() const {
  if (fresh_.empty() && heads_.empty()) return std::nullopt;
  if (fresh_.empty()) return heads_.begin()->first;
  if (heads_.empty()) return fresh_.begin()->first;
  return std::min(fresh_.begin()->first, heads_.begin()->first);
}

OrderKey PendingQueue::FiledKey(const Group& group, const Member& m) const {
  OrderKey key =
      ordering_->Key({m.req, m.submitted_at, keyed_at_, group.project_factor, group.user_factor});
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

PendingQueue::Walk::Walk(const PendingQueue& queue)
    : queue_(&queue),
      stamp_(++queue.walks_),
      fresh_(queue.fresh_.begin()),
      head_(queue.heads_.begin()) {}

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
  // A group the walk entered goes on from the heap; its head (even a new
  // one, after its first job left) is passed over.
  while (head_ != q.heads_.end() && Entered(head_->second.group)) ++head_;
  const bool fresh = fresh_ != q.fresh_.end();
  const bool head = head_ != q.heads_.end();
  const bool heap = !heap_.empty();
  if (fresh && (!head || fresh_->first < head_->first) &&
      (!heap || fresh_->first < heap_.front().first)) {
    return (fresh_++)->first;
  }
  Slot slot;
  OrderKey key;
  if (head && (!heap || head_->first < heap_.front().first)) {
    key = head_->first;
    slot = head_->second;
    ++head_;
    q.entered_in_walk_[static_cast<size_t>(slot.group)] = stamp_;
  } else if (heap) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    key = heap_.back().first;
    slot = heap_.back().second;
    heap_.pop_back();
  } else {
    return std::nullopt;
  }
  advance_ = slot;
  return key;
}

}  // namespace gleaner::sched
