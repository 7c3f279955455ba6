#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/temp_dir.h"

namespace gleaner::testing {

// What a finished `gleaner` process left behind.
struct Outcome {
  int rc;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the built gleaner binary with `args` through the shell, `env`
// (assignments, or a wrapper like "timeout 2") in front, no stdin.
inline Outcome Gleaner(const std::string& args, const std::string& env = "") {
  TempDir dir;
  const std::string cmd = env + " " + GLEANER_BINARY + " " + args + " >" +
                          (dir.path() / "out").string() + " 2>" + (dir.path() / "err").string() +
                          " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(dir.path() / "out"),
          Slurp(dir.path() / "err")};
}

// For `token create` run by the test's user: root may not hold a token
// (unless [api] allow_root_tokens), so as root the token is nobody's, which
// is enough for reading.
inline std::string OrdinaryUserFlag() { return geteuid() == 0 ? " --user nobody" : ""; }

}  // namespace gleaner::testing
