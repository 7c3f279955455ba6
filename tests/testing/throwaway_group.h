#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gleaner::testing {

// A Unix group created for one test (needs root) and removed after.
class ThrowawayGroup {
 public:
  explicit ThrowawayGroup(const std::string& prefix)
      : name_(prefix + std::to_string(getpid() % 100000)) {
    ok_ = std::system(("groupadd " + name_).c_str()) == 0;
  }
  ~ThrowawayGroup() {
    if (ok_) std::system(("groupdel " + name_ + " 2>/dev/null").c_str());
  }
  ThrowawayGroup(const ThrowawayGroup&) = delete;
  ThrowawayGroup& operator=(const ThrowawayGroup&) = delete;

  // Makes `user` a member.
  bool Add(const std::string& user) const {
    return std::system(("usermod -aG " + name_ + " " + user).c_str()) == 0;
  }
  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  bool ok_ = false;
};

}  // namespace gleaner::testing
