#pragma once

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gleaner::testing {

// A login-less user created for one test (needs root) and removed after,
// with a home of its own where `with_home` asks (removed with it).
class ThrowawayUser {
 public:
  explicit ThrowawayUser(const std::string& prefix, bool with_home = false)
      : name_(prefix + std::to_string(getpid() % 100000)), with_home_(with_home) {
    const std::string add = "useradd " +
                            std::string(with_home ? "--create-home" : "--no-create-home") +
                            " --shell /bin/sh " + name_;
    // useradd gives up at once when another test holds /etc/passwd's lock
    // (exit 1, or 10 for /etc/group): try again for a while.
    for (int attempt = 0; attempt < 50; ++attempt) {
      const int status = std::system(add.c_str());
      ok_ = status == 0;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      if (ok_ || (code != 1 && code != 10)) break;
      usleep(200'000);
    }
    if (const passwd* p = ok_ ? getpwnam(name_.c_str()) : nullptr) {
      uid_ = p->pw_uid;
      home_ = p->pw_dir;
    }
  }
  ~ThrowawayUser() {
    if (ok_) {
      std::system(("userdel " + std::string(with_home_ ? "--remove " : "") + name_ + " 2>/dev/null")
                      .c_str());
    }
  }
  ThrowawayUser(const ThrowawayUser&) = delete;
  ThrowawayUser& operator=(const ThrowawayUser&) = delete;

  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  uint32_t uid() const { return uid_; }
  const std::string& home() const { return home_; }

 private:
  std::string name_;
  bool with_home_ = false;
  std::string home_;
  bool ok_ = false;
  uint32_t uid_ = 0;
};

}  // namespace gleaner::testing
