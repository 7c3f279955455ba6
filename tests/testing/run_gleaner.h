#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
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

// Runs `binary` with `args` through the shell, `env` (assignments, or a
// wrapper like "timeout 2") in front, no stdin.
inline Outcome RunBinary(const std::string& binary, const std::string& args,
                         const std::string& env = "") {
  TempDir dir;
  const std::string cmd = env + " " + binary + " " + args + " >" + (dir.path() / "out").string() +
                          " 2>" + (dir.path() / "err").string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, Slurp(dir.path() / "out"),
          Slurp(dir.path() / "err")};
}

// Runs the built gleaner binary (see RunBinary).
inline Outcome Gleaner(const std::string& args, const std::string& env = "") {
  return RunBinary(GLEANER_BINARY, args, env);
}

// A copy of the built gleaner that every user may run, for tests that run
// it as another user: the build may sit where only root can reach (a clone
// in /root, mode 700). The static build needs nothing beside it. Removed
// with the object.
class SharedGleaner {
 public:
  SharedGleaner() {
    std::filesystem::permissions(dir_.path(), std::filesystem::perms::owner_all |
                                                  std::filesystem::perms::group_exec |
                                                  std::filesystem::perms::others_exec);
    std::filesystem::copy_file(GLEANER_BINARY, path());
    std::filesystem::permissions(path(), std::filesystem::perms::owner_all |
                                             std::filesystem::perms::group_exec |
                                             std::filesystem::perms::others_exec);
  }
  std::string path() const { return (dir_.path() / "gleaner").string(); }

 private:
  TempDir dir_;
};

// For `token create` run by the test's user, where the token must submit:
// root's tokens never do (unless [api] allow_root_tokens), so as root the
// token is nobody's.
inline std::string OrdinaryUserFlag() { return geteuid() == 0 ? " --user nobody" : ""; }

// A join token for an agent named `host`, from the coordinator whose data
// directory is `server_data_dir`, written to `dir`/NAME (mode 600); the
// file's path, or "" when none was issued (with why on stderr).
inline std::string JoinTokenFile(const TempDir& dir, const std::string& server_data_dir,
                                 const std::string& host, const std::string& flags = "",
                                 const std::string& name = "") {
  const Outcome made =
      Gleaner("--data-dir " + server_data_dir + " agent-token create --host " + host + " " + flags);
  const size_t at = made.out.find("gjt_");
  if (made.rc != 0 || at == std::string::npos) {
    std::fprintf(stderr, "agent-token create failed: %s%s\n", made.out.c_str(), made.err.c_str());
    return "";
  }
  const std::string path =
      dir.Write(name.empty() ? host + ".join-token" : name, made.out.substr(at, 68) + "\n");
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return path;
}

}  // namespace gleaner::testing
