#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"
#include "net/http_client.h"
#include "net/tls.h"
#include "observe/holder_ask.h"
#include "sched/job_spec.h"

namespace gleaner::cli {

// Options of `gleaner submit`, `queue`, `show` and `cancel`. These talk to
// the state in the data directory, which only its owner can write: the
// user `gleaner up` runs as. (Other users will submit through the API.)
struct JobOptions {
  std::string data_dir;
  std::string server;  // --server URL: a remote gleaner's API
  std::string token;   // --token: its bearer token
  net::TlsFiles tls;   // for an https:// --server
  bool json = false;
  // submit
  std::vector<std::string> command;
  int gpus = 1;
  int nodes = 1;            // a gang over this many nodes
  bool one_rack = false;    // a gang: its nodes under one rack
  int max_gpus = 0;         // elastic: up to this many
  bool can_shrink = false;  // elastic: may restart on fewer
  double min_memory_gib = 0;
  std::string gpu_memory;  // "20GiB": the most it uses per GPU
  double cpus = 0;         // host CPUs, 0.5 steps and finer; 0: not asked
  std::string memory;      // host memory, "16G"; empty: not asked
  std::vector<std::string> gpu_models;
  std::string priority_class = "normal";
  int priority = 0;
  bool not_preemptible = false;
  int checkpoint_signal = 15;
  double grace_s = 30;
  double max_runtime_s = 0;
  double expected_runtime_s = 0;
  std::string array;
  std::string name;  // --job-name
  std::string dag;   // --dag FILE: the jobs of a DAG file instead of one command
  std::vector<int64_t> after;
  std::vector<std::string> dependency;  // Slurm's form: afterok:3:4,afterany:5
  std::string project;
  std::vector<std::string> labels;
  std::vector<std::string> env;
  std::string workdir;
  std::string image;                // --image: run in this OCI image with podman
  std::string sif;                  // --sif: run in this Apptainer image file
  std::vector<std::string> mounts;  // --mount SRC:DST[:ro] into the container
  // run
  bool pty = false;  // --pty: srun's word; a session always has a terminal
  // queue
  bool all = false;
  std::string states;  // --state queued,held
  std::string user;
  int64_t limit = 0;
  // show, cancel, hold, release, logs
  int64_t id = 0;
  bool events = false;         // show --events: its history
  bool cancel_array = false;   // cancel --array: every task of the job's array
  bool follow = false;         // logs -f
  bool stderr_stream = false;  // logs --err
  // keep, unpark
  std::string gpu;           // an index or a UUID
  bool give_up = false;      // unpark --give-up: leave the parked holder frozen (root)
  bool kill_holder = false;  // unpark --kill: give up and end it (root)
};

struct JobCommands {
  CLI::App* submit;
  CLI::App* run;
  CLI::App* notebook;
  CLI::App* queue;
  CLI::App* show;
  CLI::App* cancel;
  CLI::App* hold;
  CLI::App* release;
  CLI::App* logs;
  CLI::App* keep;
  CLI::App* unpark;
};

JobCommands AddJobCommands(CLI::App& app, JobOptions& options);

// The job the submit options describe (its command included), or what is
// wrong with them.
core::Result<sched::JobSpec> SpecFromOptions(const JobOptions& options);
// Submits `spec` through the API; the job as the API answers it.
core::Result<nlohmann::json> SubmitToApi(const net::Endpoint& api, const std::string& token,
                                         const sched::JobSpec& spec);

int RunSubmit(const JobOptions& options, std::ostream& out, std::ostream& err);
// `submit --dag FILE`: the file's jobs in order, each given the ids of
// those it waits for.
int RunSubmitDag(const JobOptions& options, std::ostream& out, std::ostream& err);
int RunQueue(const JobOptions& options, std::ostream& out, std::ostream& err);
int RunShow(const JobOptions& options, std::ostream& out, std::ostream& err);
int RunCancel(const JobOptions& options, std::ostream& out, std::ostream& err);
// hold and release: `action` is "hold" or "release".
int RunHoldRelease(const JobOptions& options, const std::string& action, std::ostream& out,
                   std::ostream& err);
int RunLogs(const JobOptions& options, std::ostream& out, std::ostream& err);
// keep and unpark a held GPU's holder (docs/held-idle.md); `unpark`
// --give-up and --kill are root's.
int RunParking(const JobOptions& options, observe::HolderAsk ask, std::ostream& out,
               std::ostream& err);

}  // namespace gleaner::cli
