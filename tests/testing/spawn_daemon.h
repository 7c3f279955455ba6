#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner::testing {

// A process started in the background with its output in `log`.
struct Daemon {
  std::string log;
  int pid = 0;
};

// Runs the shell command `command` in the background, appending to
// DIR/NAME.log.
inline Daemon Spawn(const TempDir& dir, const std::string& name, const std::string& command) {
  Daemon d{(dir.path() / (name + ".log")).string(), 0};
  const std::string pid_file = (dir.path() / (name + ".pid")).string();
  std::system((command + " >>" + d.log + " 2>&1 & echo $! >" + pid_file).c_str());
  d.pid = std::stoi(Slurp(pid_file));
  return d;
}

// Whether `text` appears in the daemon's log within `seconds`.
inline bool WaitForLog(const Daemon& d, const std::string& text, int seconds = 30) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (Slurp(d.log).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// How often `text` appears in the daemon's log.
inline int CountInLog(const Daemon& d, const std::string& text) {
  const std::string all = Slurp(d.log);
  int n = 0;
  for (size_t at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) ++n;
  return n;
}

}  // namespace gleaner::testing
