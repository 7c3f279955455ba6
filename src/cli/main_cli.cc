#include "cli/main_cli.h"

#include <iostream>

#include "cli/bench_command.h"
#include "cli/cluster_commands.h"
#include "cli/cost_command.h"
#include "cli/daemon_support.h"
#include "cli/doctor_command.h"
#include "cli/eval_command.h"
#include "cli/exit_codes.h"
#include "cli/governance_commands.h"
#include "cli/job_commands.h"
#include "cli/monitor_command.h"
#include "cli/policy_commands.h"
#include "cli/profile_command.h"
#include "cli/report_command.h"
#include "cli/session_command.h"
#include "cli/sim_command.h"
#include "cli/sim_cross_command.h"
#include "cli/sim_harvest_command.h"
#include "cli/slurm_command.h"
#include "cli/token_commands.h"
#include "core/version.h"

namespace gleaner::cli {

int Main(int argc, char** argv, const core::Clock& clock,
         const agent::ProcessInspector& inspector) {
  CLI::App app{"gleaner: puts idle GPUs to work", "gleaner"};
  app.set_version_flag("--version", "gleaner " + core::VersionLine());
  app.require_subcommand(1);
  GpusOptions gpus;
  CLI::App* gpus_cmd = AddGpusCommand(app, gpus);
  EvalIdleOptions eval_idle;
  EvalForecastOptions eval_forecast;
  const EvalCommands eval_cmds = AddEvalCommands(app, eval_idle, eval_forecast);
  MonitorOptions monitor;
  CLI::App* monitor_cmd = AddMonitorCommand(app, monitor);
  MonitorOptions up;
  CLI::App* up_cmd = AddUpCommand(app, up);
  ServerOptions server;
  CLI::App* server_cmd = AddServerCommand(app, server);
  AgentOptions agent_opts;
  CLI::App* agent_cmd = AddAgentCommand(app, agent_opts);
  JobOptions job;
  const JobCommands job_cmds = AddJobCommands(app, job);
  GovernanceOptions governance;
  const GovernanceCommands governance_cmds = AddGovernanceCommands(app, governance, job);
  PolicyOptions policy;
  const PolicyCommands policy_cmds = AddPolicyCommands(app, policy, job);
  // `gleaner --data-dir D <command>` as well as `gleaner <command> --data-dir D`.
  TokenOptions token;
  const TokenCommands token_cmds = AddTokenCommands(app, token);
  std::string data_dir;
  app.add_option("--data-dir", data_dir, "Where gleaner keeps its state (for every command)");
  ApiTarget remote;
  app.add_option("--server", remote.server,
                 "A gleaner API to use instead of the local one: http(s)://HOST:PORT")
      ->envname("GLEANER_SERVER");
  AddClientTlsOptions(app, remote.tls, /*env=*/true);
  app.add_option("--token", remote.token, "Bearer token for --server (gleaner token create)")
      ->envname("GLEANER_TOKEN");
  ProfileOptions profile;
  CLI::App* profile_cmd = AddProfileCommand(app, profile);
  BenchFragOptions bench_frag;
  BenchSchedOptions bench_sched;
  const BenchCommands bench_cmds = AddBenchCommands(app, bench_frag, bench_sched);
  SimReplayOptions sim_replay;
  CLI::App* sim_replay_cmd = AddSimCommands(app, sim_replay);
  SimHarvestOptions sim_harvest;
  CLI::App* sim_harvest_cmd = AddSimHarvestCommand(*app.get_subcommand("sim"), sim_harvest);
  SimCrossOptions sim_cross;
  CLI::App* sim_cross_cmd = AddSimCrossCommand(app, sim_cross);
  CostAdviseOptions cost_advise;
  CostReportOptions cost_report;
  const CostCommands cost_cmds = AddCostCommands(app, cost_advise, cost_report);
  ReportOptions report;
  CLI::App* report_cmd = AddReportCommand(app, report);
  SlurmJobsOptions slurm_jobs;
  CLI::App* slurm_cmd = AddSlurmCommand(app, slurm_jobs);
  DoctorOptions doctor;
  CLI::App* doctor_cmd = AddDoctorCommand(app, doctor);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  for (std::string* d :
       {&gpus.data_dir, &monitor.data_dir, &up.data_dir, &server.data_dir, &agent_opts.data_dir,
        &profile.data_dir, &job.data_dir, &token.api.data_dir, &cost_advise.data_dir,
        &cost_report.data_dir, &report.data_dir, &slurm_jobs.data_dir, &doctor.setup.data_dir}) {
    if (d->empty()) *d = data_dir;
  }
  job.server = token.api.server = gpus.server = remote.server;
  job.token = token.api.token = gpus.token = remote.token;
  job.tls = token.api.tls = gpus.tls = doctor.setup.server_tls = remote.tls;
  doctor.setup.server = remote.server;
  if (doctor_cmd->parsed()) return RunDoctor(doctor, std::cout, std::cerr);
  if (gpus_cmd->parsed()) return RunGpus(gpus, {clock, inspector, std::cout, std::cerr});
  if (up_cmd->parsed()) return RunMonitor(up, clock, inspector, std::cout, std::cerr);
  if (server_cmd->parsed()) return RunServer(server, clock, std::cout, std::cerr);
  if (agent_cmd->parsed()) {
    return RunAgent(agent_opts, clock, inspector, std::cout, std::cerr);
  }
  if (job_cmds.submit->parsed()) return RunSubmit(job, std::cout, std::cerr);
  if (job_cmds.run->parsed()) return RunSession(job, std::cerr);
  if (job_cmds.notebook->parsed()) return RunNotebook(job, std::cout, std::cerr);
  if (job_cmds.queue->parsed()) return RunQueue(job, std::cout, std::cerr);
  if (job_cmds.show->parsed()) return RunShow(job, std::cout, std::cerr);
  if (job_cmds.cancel->parsed()) return RunCancel(job, std::cout, std::cerr);
  if (job_cmds.keep->parsed()) {
    return RunParking(job, observe::HolderAsk::kKeep, std::cout, std::cerr);
  }
  if (job_cmds.unpark->parsed()) {
    const observe::HolderAsk ask = job.kill_holder ? observe::HolderAsk::kKill
                                   : job.give_up   ? observe::HolderAsk::kGiveUp
                                                   : observe::HolderAsk::kUnpark;
    return RunParking(job, ask, std::cout, std::cerr);
  }
  if (policy_cmds.show->parsed()) return RunPolicyShow(policy, job, std::cout, std::cerr);
  if (policy_cmds.list->parsed()) return RunPolicyList(job, std::cout, std::cerr);
  if (policy_cmds.diff->parsed()) return RunPolicyDiff(policy, job, std::cout, std::cerr);
  if (policy_cmds.apply->parsed()) return RunPolicyApply(policy, job, std::cout, std::cerr);
  if (policy_cmds.rollback->parsed()) return RunPolicyRollback(policy, job, std::cout, std::cerr);
  if (policy_cmds.dry_run->parsed()) return RunPolicyDryRun(policy, job, std::cout, std::cerr);
  if (governance_cmds.events->parsed()) return RunEvents(governance, job, std::cout, std::cerr);
  if (governance_cmds.approvals->parsed()) return RunApprovals(job, std::cout, std::cerr);
  if (governance_cmds.approve->parsed()) {
    return RunDecide(governance, job, true, std::cout, std::cerr);
  }
  if (governance_cmds.deny->parsed())
    return RunDecide(governance, job, false, std::cout, std::cerr);
  if (job_cmds.hold->parsed()) return RunHoldRelease(job, "hold", std::cout, std::cerr);
  if (job_cmds.release->parsed()) return RunHoldRelease(job, "release", std::cout, std::cerr);
  if (job_cmds.logs->parsed()) return RunLogs(job, std::cout, std::cerr);
  if (token_cmds.create->parsed()) return RunTokenCreate(token, std::cout, std::cerr);
  if (token_cmds.list->parsed()) return RunTokenList(token, std::cout, std::cerr);
  if (token_cmds.revoke->parsed()) return RunTokenRevoke(token, std::cout, std::cerr);
  if (token_cmds.agent_create->parsed()) return RunAgentTokenCreate(token, std::cout, std::cerr);
  if (token_cmds.host_forget->parsed()) return RunHostGpus(token, false, std::cout, std::cerr);
  if (token_cmds.host_accept->parsed()) return RunHostGpus(token, true, std::cout, std::cerr);
  if (eval_cmds.idle->parsed()) return RunEvalIdle(eval_idle, std::cout, std::cerr);
  if (eval_cmds.forecast->parsed()) return RunEvalForecast(eval_forecast, std::cout, std::cerr);
  if (monitor_cmd->parsed()) return RunMonitor(monitor, clock, inspector, std::cout, std::cerr);
  if (profile_cmd->parsed()) return RunProfile(profile, std::cout, std::cerr);
  if (bench_cmds.frag->parsed()) return RunBenchFrag(bench_frag, std::cout, std::cerr);
  if (bench_cmds.sched->parsed()) return RunBenchSched(bench_sched, std::cout, std::cerr);
  if (sim_replay_cmd->parsed()) return RunSimReplay(sim_replay, std::cout, std::cerr);
  if (sim_harvest_cmd->parsed()) return RunSimHarvest(sim_harvest, std::cout, std::cerr);
  if (sim_cross_cmd->parsed()) return RunSimCross(sim_cross, std::cout, std::cerr);
  if (report_cmd->parsed()) return RunReport(report, clock.Now(), std::cout, std::cerr);
  if (slurm_cmd->parsed()) return RunSlurmJobs(slurm_jobs, clock.Now(), std::cout, std::cerr);
  if (cost_cmds.advise->parsed()) {
    return RunCostAdvise(cost_advise, clock.Now(), std::cout, std::cerr);
  }
  if (cost_cmds.report->parsed()) {
    return RunCostReport(cost_report, clock.Now(), std::cout, std::cerr);
  }
  return kExitUsage;
}

}  // namespace gleaner::cli
