#include "cli/doctor_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "cli/exit_codes.h"

namespace gleaner::cli {

CLI::App* AddDoctorCommand(CLI::App& app, DoctorOptions& options) {
  CLI::App* doctor = app.add_subcommand(
      "doctor",
      "Check what gleaner needs on this host (driver, GPUs, cgroups, data directory, config, "
      "port, store, TLS, clock against --server) and say how to fix each problem");
  doctor->add_option("--data-dir", options.setup.data_dir, "The data directory to check");
  doctor->add_option("--config", options.setup.config,
                     "Config file (default: DATA_DIR/gleaner.toml; for root, "
                     "/etc/gleaner/gleaner.toml where it exists)");
  doctor->add_option("--fake", options.setup.fake, "Skip the driver: simulated GPUs");
  doctor->add_option("--nvml-library", options.setup.nvml_library, "The NVML library to load")
      ->capture_default_str();
  doctor->add_option("--listen", options.setup.listen, "The API's HOST:PORT to check, or none")
      ->capture_default_str();
  doctor->add_option("--store", options.setup.store, "A store to open: postgresql://... or a file");
  doctor->add_option("--store-file", options.setup.store_file, "A file (mode 600) holding --store");
  doctor->add_option("--tls-cert", options.setup.tls.cert, "A PEM certificate to check");
  doctor->add_option("--tls-key", options.setup.tls.key, "Its PEM private key");
  doctor->add_flag("--json", options.json, "Print the checks as JSON");
  return doctor;
}

int RunDoctor(const DoctorOptions& options, std::ostream& out, std::ostream& /*err*/) {
  using daemon::CheckLevel;
  const std::vector<daemon::HostCheck> checks = daemon::CheckHost(options.setup);
  bool failed = false;
  for (const daemon::HostCheck& c : checks) failed = failed || c.level == CheckLevel::kFail;
  if (options.json) {
    nlohmann::json doc;
    doc["ok"] = !failed;
    doc["checks"] = nlohmann::json::array();
    for (const daemon::HostCheck& c : checks) {
      doc["checks"].push_back(
          {{"name", c.name},
           {"status", c.level == CheckLevel::kFail ? "fail" : daemon::CheckLevelName(c.level)},
           {"detail", c.detail}});
    }
    out << doc.dump(2) << "\n";
  } else {
    for (const daemon::HostCheck& c : checks) {
      char head[32];
      std::snprintf(head, sizeof head, "%-4s  %-9s ",
                    std::string(daemon::CheckLevelName(c.level)).c_str(), c.name.c_str());
      out << head << c.detail << "\n";
    }
    out << (failed ? "some checks failed: fix them as said above\n" : "nothing failed\n");
  }
  return failed ? kExitFailure : kExitOk;
}

}  // namespace gleaner::cli
