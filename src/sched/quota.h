#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace gleaner::sched {

// A project's share of the cluster: `guaranteed_gpus` it can always get
// back (by preempting projects that borrow), and at most
// `borrow_limit_gpus` more while others leave GPUs idle (nullopt: no limit).
// `weight` is its fair-share weight.
struct ProjectQuota {
  int guaranteed_gpus = 0;
  std::optional<int> borrow_limit_gpus;
  double weight = 1;
};

// Who uses how much, against the quotas. Usage in milli-GPU. Thread-compatible.
class QuotaBook {
 public:
  QuotaBook(std::map<std::string, ProjectQuota> quotas, ProjectQuota default_quota)
      : quotas_(std::move(quotas)), default_(default_quota) {}

  const ProjectQuota& For(const std::string& project) const;
  int64_t used_milli(const std::string& project) const;
  // The most the project may hold; nullopt: no limit.
  std::optional<int64_t> limit_milli(const std::string& project) const;
  int64_t guaranteed_milli(const std::string& project) const;

  // Whether the project may take `milli` more now.
  bool Admits(const std::string& project, int64_t milli) const;
  // Whether `milli` more still falls within the project's guarantee.
  bool WithinGuarantee(const std::string& project, int64_t milli) const;
  // Whether the project holds more than its guarantee (it borrows).
  bool Borrowing(const std::string& project) const;
  // Projects that borrow now.
  int borrowing_projects() const { return borrowing_; }

  void Add(const std::string& project, int64_t milli);
  void Remove(const std::string& project, int64_t milli);

 private:
  std::map<std::string, ProjectQuota> quotas_;
  ProjectQuota default_;
  std::map<std::string, int64_t> used_;
  int borrowing_ = 0;
};

}  // namespace gleaner::sched
