#pragma once

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

namespace gleaner::testing {

// A directory removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gleaner-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  // A daemon the test stopped may still be renaming a file inside: try
  // again rather than throw from a destructor.
  ~TempDir() {
    std::error_code error;
    for (int attempt = 0; attempt < 20; ++attempt) {
      std::filesystem::remove_all(path_, error);
      if (!error) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `text` to `name` inside the directory and returns the full path.
  std::string Write(const std::string& name, const std::string& text) const {
    const std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

// A file's whole text; empty when it cannot be read.
inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gleaner::testing
