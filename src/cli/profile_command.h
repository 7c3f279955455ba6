#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>

namespace gleaner::cli {

struct ProfileOptions {
  std::string kind = "gpu";  // gpu, user or project
  std::string key;           // only this GPU, user or project
  std::string data_dir;
  bool json = false;
};

// Registers `gleaner profile`: hour-of-week usage kept by `gleaner monitor`.
CLI::App* AddProfileCommand(CLI::App& app, ProfileOptions& options);
int RunProfile(const ProfileOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gleaner::cli
