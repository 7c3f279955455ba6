#include "cli/bench_command.h"

#include <string>

#include "lab/frag_policy.h"
#include "lab/frag_workload.h"

namespace gleaner::cli {

BenchCommands AddBenchCommands(CLI::App& app, BenchFragOptions& frag, BenchSchedOptions& sched) {
  CLI::App* bench = app.add_subcommand("bench", "Measure gleaner's scheduling decisions");
  bench->require_subcommand(1);
  BenchCommands cmds;

  cmds.frag = bench->add_subcommand(
      "frag",
      "The FGD paper's fragmentation experiment: pods of an openb trace arrive until their GPU "
      "requests reach tune x the cluster's GPUs; prints the GPU allocation ratio at each percent "
      "of load arrived");
  cmds.frag->add_option("--pods", frag.pods, "Pod list CSV, like openb_pod_list_default.csv")
      ->required()
      ->check(CLI::ExistingFile);
  cmds.frag->add_option("--nodes", frag.nodes, "Node list CSV, like openb_node_list_gpu_node.csv")
      ->required()
      ->check(CLI::ExistingFile);
  cmds.frag
      ->add_option("--policy", frag.policy,
                   "Placement policy: " + std::string(lab::kFragPolicyNames))
      ->capture_default_str()
      ->check(CLI::IsMember({"random", "bestfit", "fgd", "gleaner"}));
  cmds.frag->add_option("--tune", frag.tune, "Arrive until requests reach this x cluster GPUs")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 10.0));
  cmds.frag->add_option("--seed", frag.seed, "Seed of the arrival order, clones and node ties")
      ->capture_default_str();
  cmds.frag
      ->add_option("--runs", frag.runs,
                   "Run seeds seed, seed+1, ... this many times and print the mean curve")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmds.frag
      ->add_option(
          "--workload", frag.workload,
          "Draw a variant of the FGD paper from the pods: " + std::string(lab::kFragVariantForms))
      ->capture_default_str();
  cmds.frag->add_option("--workload-seed", frag.workload_seed, "Seed of the variant's draw")
      ->capture_default_str();
  cmds.frag->add_flag("--json", frag.json,
                      "Print {\"policy\", \"allocation_pct\": {\"0\": ..., ...}, \"wall_s\"}");

  cmds.sched = bench->add_subcommand(
      "sched",
      "Drive the scheduler on a synthetic cluster and queue; prints placements per second, "
      "p50/p99 decision latency and peak memory");
  cmds.sched->add_option("--nodes", sched.setup.nodes, "Nodes in the cluster")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  cmds.sched->add_option("--gpus-per-node", sched.setup.gpus_per_node, "GPUs per node")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  cmds.sched
      ->add_option("--pending", sched.setup.pending, "Jobs waiting when GPUs start to free up")
      ->capture_default_str()
      ->check(CLI::Range(1, 100'000'000));
  cmds.sched
      ->add_option("--users", sched.setup.users, "Users the jobs are spread over (7 projects)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  cmds.sched
      ->add_option("--ticks", sched.setup.ticks,
                   "Ticks timed after the events, 30 s apart, in each of two states: the "
                   "cluster full, and GPUs free while the backlog waits on project quotas")
      ->capture_default_str()
      ->check(CLI::Range(0, 100'000));
  cmds.sched
      ->add_option("--scenario", sched.scenario,
                   "What is timed: verdicts (GPUs become lendable one at a time), nodes-added "
                   "(nodes register one at a time), preempt (critical jobs into a full cluster), "
                   "gangs (--gang-size GPUs into a half-full cluster), multi-node-gangs "
                   "(--gang-size whole nodes, racks of 40) or preempt-gangs (critical whole-node "
                   "gangs preempting half a node)")
      ->capture_default_str();
  cmds.sched->add_flag("--gang", sched.setup.gang,
                       "verdicts, nodes-added: jobs of 2, 4 and 8 GPUs on one node");
  cmds.sched->add_flag("--preempt", sched.preempt, "The same as --scenario preempt");
  cmds.sched
      ->add_option("--gang-size", sched.setup.gang_size,
                   "gangs: GPUs a gang takes; multi-node-gangs: nodes a gang takes")
      ->capture_default_str()
      ->check(CLI::Range(1, 100'000));
  cmds.sched
      ->add_option("--events", sched.setup.events,
                   "gangs, multi-node-gangs, preempt-gangs: submits timed")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  cmds.sched->add_flag(
      "--json", sched.json,
      "Print placements_per_s, p50_us, p99_us, the ticks' p50_ms and max_ms and rss_bytes as "
      "JSON");
  return cmds;
}

}  // namespace gleaner::cli
