#include "cli/main_cli.h"

#include <iostream>

#include "cli/eval_command.h"
#include "cli/exit_codes.h"
#include "cli/monitor_command.h"
#include "cli/profile_command.h"

namespace gleaner::cli {

int Main(int argc, char** argv, const core::Clock& clock,
         const agent::ProcessInspector& inspector) {
  CLI::App app{"gleaner: puts idle GPUs to work", "gleaner"};
  app.set_version_flag("--version", "gleaner 0.1.0");
  app.require_subcommand(1);
  GpusOptions gpus;
  CLI::App* gpus_cmd = AddGpusCommand(app, gpus);
  EvalIdleOptions eval_idle;
  CLI::App* eval_idle_cmd = AddEvalIdleCommand(app, eval_idle);
  MonitorOptions monitor;
  CLI::App* monitor_cmd = AddMonitorCommand(app, monitor);
  ProfileOptions profile;
  CLI::App* profile_cmd = AddProfileCommand(app, profile);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (gpus_cmd->parsed()) return RunGpus(gpus, {clock, inspector, std::cout, std::cerr});
  if (eval_idle_cmd->parsed()) return RunEvalIdle(eval_idle, std::cout, std::cerr);
  if (monitor_cmd->parsed()) return RunMonitor(monitor, clock, inspector, std::cout, std::cerr);
  if (profile_cmd->parsed()) return RunProfile(profile, std::cout, std::cerr);
  return kExitUsage;
}

}  // namespace gleaner::cli
