#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::store {

// One version of the site's policy: the whole of gleaner.toml as applied,
// who applied it, when and why (docs/policy.md).
struct PolicyVersion {
  int64_t version = 0;  // 1, 2, ...: assigned in order of applying
  core::TimePoint at;
  std::string author;
  std::string note;
  std::string text;

  bool operator==(const PolicyVersion&) const = default;
};

class PolicyStore {
 public:
  virtual ~PolicyStore() = default;
  // Saves `policy` as the next version, and its `event` ("policy_applied",
  // "policy_rolled_back") in the history, in one transaction.
  virtual core::Result<PolicyVersion> AddPolicy(const PolicyVersion& policy,
                                                const std::string& event) = 0;
  // Version `version`, or the latest for 0; kNotFound when there is none.
  virtual core::Result<PolicyVersion> GetPolicy(int64_t version) = 0;
  // The latest `limit` versions, newest first, without their text.
  virtual core::Result<std::vector<PolicyVersion>> ListPolicies(int64_t limit) = 0;
};

}  // namespace gleaner::store
