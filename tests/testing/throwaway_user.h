#pragma once

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gleaner::testing {

// A login-less user created for one test (needs root) and removed after.
class ThrowawayUser {
 public:
  explicit ThrowawayUser(const std::string& prefix)
      : name_(prefix + std::to_string(getpid() % 100000)) {
    ok_ = std::system(("useradd --no-create-home --shell /bin/sh " + name_).c_str()) == 0;
    if (const passwd* p = ok_ ? getpwnam(name_.c_str()) : nullptr) uid_ = p->pw_uid;
  }
  ~ThrowawayUser() {
    if (ok_) std::system(("userdel " + name_ + " 2>/dev/null").c_str());
  }
  ThrowawayUser(const ThrowawayUser&) = delete;
  ThrowawayUser& operator=(const ThrowawayUser&) = delete;

  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  uint32_t uid() const { return uid_; }

 private:
  std::string name_;
  bool ok_ = false;
  uint32_t uid_ = 0;
};

}  // namespace gleaner::testing
