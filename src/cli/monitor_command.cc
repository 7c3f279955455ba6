#include "cli/monitor_command.h"

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "cli/gpu_source.h"
#include "daemon/daemon_start.h"
#include "daemon/gpu_source.h"
#include "daemon/host_daemon.h"

namespace gleaner::cli {
namespace {

void AddDaemonOptions(CLI::App* cmd, MonitorOptions& options) {
  cmd->add_option("--fake", options.fake, "Simulated GPUs from a scenario (demo, or a file)")
      ->type_name("SCENARIO");
  cmd->add_option("--nvml-library", options.nvml_library, "The NVML library to load")
      ->capture_default_str();
  cmd->add_option("--data-dir", options.data_dir,
                  "Where state lives (default: $GLEANER_DATA_DIR, /var/lib/gleaner as root, "
                  "~/.local/share/gleaner otherwise)");
  cmd->add_option("--config", options.config, "Config file (default: DATA_DIR/gleaner.toml)");
  cmd->add_option("--interval", options.interval_s, "Seconds between samples (default 1)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--for", options.for_s, "Stop after this many seconds")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--accept-gpu-source", options.accept_gpu_source,
                "Write to a data dir whose history came from the other kind of GPU source "
                "(simulated or the real driver)");
}

}  // namespace

CLI::App* AddMonitorCommand(CLI::App& app, MonitorOptions& options) {
  CLI::App* cmd = app.add_subcommand("monitor",
                                     "Watch this host's GPUs: judge idleness over time, keep "
                                     "history, fire alerts (starts no job)");
  AddDaemonOptions(cmd, options);
  return cmd;
}

CLI::App* AddUpCommand(CLI::App& app, MonitorOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "up", "Run gleaner on this host: judge the GPUs and run queued jobs on idle ones");
  AddDaemonOptions(cmd, options);
  cmd->preparse_callback([&options](size_t) { options.up = options.harvest = true; });
  cmd->add_option_function<std::string>(
         "--mode",
         [&options](const std::string& m) {
           options.harvest = m != "monitor";
           options.shadow = m == "shadow";
         },
         "harvest (default); monitor (observe, judge and report; start no job); or shadow "
         "(place jobs as harvest would, start none, report what would have run where)")
      ->check(CLI::IsMember({"harvest", "monitor", "shadow"}));
  cmd->add_option_function<std::string>(
         "--listen",
         [&options](const std::string& a) {
           options.listen = a;
           options.listen_given = true;
         },
         std::string("HTTP API for token holders: HOST:PORT, or none (default ") + kDefaultListen +
             ")")
      ->type_name("HOST:PORT");
  AddServerTlsOptions(*cmd, options.tls);
  return cmd;
}

int RunMonitor(const MonitorOptions& options, const core::Clock& clock,
               const agent::ProcessInspector& inspector, std::ostream& out, std::ostream& err) {
  int start_rc = kExitOk;
  std::optional<daemon::DaemonBase> base =
      StartDaemon(options.data_dir, options.config, options.interval_s, err, &start_rc);
  if (!base) return start_rc;
  GpuSource source;
  int rc = OpenGpuSource(options.fake, options.nvml_library, clock, inspector, err, &source);
  if (rc == kExitNoDriver && options.up && options.fake.empty()) {
    std::error_code exists_ec;
    const std::optional<std::string> why_not = daemon::WhyNotSimulate(
        options.nvml_library, std::filesystem::exists(base->config_path, exists_ec));
    if (why_not) {
      err << "gleaner: the NVIDIA driver cannot be used and " << *why_not
          << ", so gleaner does not run on simulated GPUs: fix the driver (`gleaner doctor` "
             "explains), or pass --fake demo to try gleaner on simulated GPUs\n";
      return rc;
    }
    // `gleaner up` by hand on a machine without NVIDIA GPUs: say so
    // loudly, and show what it does on simulated ones rather than stopping.
    err << "gleaner: *** no NVIDIA hardware or driver on this host: running on SIMULATED GPUs "
           "(--fake demo); nothing here is real ***\n";
    rc = OpenGpuSource("demo", options.nvml_library, clock, inspector, err, &source);
  }
  if (rc != kExitOk) return rc;
  daemon::HostDaemonOptions host;
  host.up = options.up;
  host.harvest = options.harvest;
  host.shadow = options.shadow;
  host.listen = options.listen;
  host.listen_given = options.listen_given;
  host.tls = options.tls;
  host.for_s = options.for_s;
  host.accept_gpu_source = options.accept_gpu_source;
  const core::Status ran = daemon::RunHostDaemon(host, *base, std::move(source), clock, out);
  if (!ran.ok()) {
    err << "gleaner: " << ran.message() << "\n";
    return ran.code() == core::StatusCode::kUnavailable ? kExitFailure : kExitBadInput;
  }
  return kExitOk;
}

}  // namespace gleaner::cli
