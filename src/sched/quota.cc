#include "sched/quota.h"

namespace gleaner::sched {

const ProjectQuota& QuotaBook::For(const std::string& project) const {
  auto it = quotas_.find(project);
  return it == quotas_.end() ? default_ : it->second;
}

int64_t QuotaBook::used_milli(const std::string& project) const {
  auto it = used_.find(project);
  return it == used_.end() ? 0 : it->second;
}

std::optional<int64_t> QuotaBook::limit_milli(const std::string& project) const {
  const ProjectQuota& q = For(project);
  if (!q.borrow_limit_gpus) return std::nullopt;
  return (int64_t{q.guaranteed_gpus} + *q.borrow_limit_gpus) * 1000;
}

int64_t QuotaBook::guaranteed_milli(const std::string& project) const {
  return int64_t{For(project).guaranteed_gpus} * 1000;
}

bool QuotaBook::Admits(const std::string& project, int64_t milli) const {
  const auto limit = limit_milli(project);
  return !limit || used_milli(project) + milli <= *limit;
}

bool QuotaBook::WithinGuarantee(const std::string& project, int64_t milli) const {
  return used_milli(project) + milli <= guaranteed_milli(project);
}

bool QuotaBook::Borrowing(const std::string& project) const {
  return used_milli(project) > guaranteed_milli(project);
}

void QuotaBook::Add(const std::string& project, int64_t milli) {
  const bool before = Borrowing(project);
  used_[project] += milli;
  borrowing_ += static_cast<int>(Borrowing(project)) - static_cast<int>(before);
}

void QuotaBook::Remove(const std::string& project, int64_t milli) {
  const bool before = Borrowing(project);
  used_[project] -= milli;
  borrowing_ += static_cast<int>(Borrowing(project)) - static_cast<int>(before);
}

}  // namespace gleaner::sched
