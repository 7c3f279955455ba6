#include "cli/job_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <thread>

#include "agent/process_info.h"
#include "cli/api_client.h"
#include "cli/dag_file.h"
#include "cli/exit_codes.h"
#include "cli/governance_commands.h"
#include "config/data_dir.h"
#include "core/format.h"
#include "core/json_depth.h"
#include "observe/verdict_json.h"
#include "sched/dependencies.h"
#include "server/event_api.h"
#include "server/job_list_query.h"
#include "store/job_json.h"
#include "store/sqlite_store.h"

namespace gleaner::cli {
namespace {

using nlohmann::json;

core::Duration Seconds(double s) { return core::Duration(static_cast<int64_t>(s * 1e6)); }

// The state a running `gleaner up` keeps; never created here.
core::Result<std::unique_ptr<store::SqliteStore>> OpenState(const std::string& data_dir_flag) {
  const std::string dir = config::DataDir(data_dir_flag);
  const std::string path = dir + "/gleaner.db";
  GLEANER_ASSIGN_OR_RETURN(const bool kept, config::InDataDir(path));
  if (!kept) {
    return core::NotFound("no gleaner state in " + dir + ": start `gleaner up` first (or pass " +
                          "--data-dir)");
  }
  // gleaner up creates the file first, then fills it in.
  if (std::error_code ec; std::filesystem::file_size(path, ec) == 0) {
    return core::NotFound("gleaner up is starting in " + dir + "; try again in a moment");
  }
  if (access(path.c_str(), W_OK) != 0) {
    return core::PermissionDenied(path +
                                  " belongs to the user gleaner runs as; other users "
                                  "submit through the API");
  }
  return store::SqliteStore::Open(path);
}

json RecordToJson(const store::JobRecord& r) { return store::JobRecordToJson(r); }

// The API of a running `gleaner up`, when there is one to reach.
core::Result<std::optional<net::Endpoint>> Api(const JobOptions& o) {
  return FindApi({o.server, o.token, o.data_dir, o.tls});
}

// The API, for commands that need a running daemon.
core::Result<net::Endpoint> RunningApi(const JobOptions& o) {
  return cli::RunningApi({o.server, o.token, o.data_dir, o.tls});
}

// "submitted job 7", or for an array "submitted array 7: 100 tasks, jobs 7-106".
std::string Submitted(const json& j) {
  const int64_t id = j["id"].get<int64_t>();
  if (!j.contains("array_tasks")) return "submitted job " + std::to_string(id);
  const int64_t tasks = j["array_tasks"].get<int64_t>();
  return "submitted array " + std::to_string(id) + ": " + std::to_string(tasks) + " tasks, jobs " +
         std::to_string(id) + "-" + std::to_string(id + tasks - 1);
}

std::string QueueTable(const json& jobs) {
  char line[256];
  std::snprintf(line, sizeof line, "%-6s %-10s %-9s %4s %3s  %-40s %s", "ID", "USER", "STATE",
                "GPUS", "TRY", "COMMAND", "REASON");
  std::string out = line;
  for (const json& j : jobs) {
    // Each cell one line, its control characters escaped: the command and
    // the reason are others' words, and root reads this table.
    std::string command;
    for (const json& a : j["spec"]["command"])
      command += (command.empty() ? "" : " ") + core::OneLine(a.get<std::string>());
    if (command.size() > 40) command = command.substr(0, 37) + "...";
    // The GPUs it holds; while it waits, what it asks for ("2-8": elastic;
    // "4x8": a gang of 4 nodes with 8 each).
    const int max_gpus = j["spec"].value("max_gpus", 0);
    const int nodes = j["spec"].value("nodes", 1);
    const std::string gpus =
        !j["gpus"].empty() ? std::to_string(j["gpus"].size())
        : nodes > 1 ? std::to_string(nodes) + "x" + std::to_string(j["spec"]["gpus"].get<int>())
        : max_gpus > j["spec"]["gpus"].get<int>()
            ? std::to_string(j["spec"]["gpus"].get<int>()) + "-" + std::to_string(max_gpus)
            : std::to_string(j["spec"]["gpus"].get<int>());
    std::snprintf(line, sizeof line, "\n%-6lld %-10s %-9s %4s %3d  %-40s %s",
                  static_cast<long long>(j["id"].get<int64_t>()),
                  core::OneLine(j["user"].get<std::string>()).c_str(),
                  j["state"].get<std::string>().c_str(), gpus.c_str(), j["attempts"].get<int>(),
                  command.c_str(), core::OneLine(j["reason"].get<std::string>()).c_str());
    out += line;
  }
  return out;
}

// What a batch job and a session both say: what they need and who pays.
void AddResourceOptions(CLI::App* cmd, JobOptions& o) {
  cmd->add_option("command", o.command, "The program and its arguments (after --)")->expected(-1);
  cmd->add_option("--gpus", o.gpus, "GPUs it needs, all at once (on each node of a gang)")
      ->capture_default_str();
  cmd->add_option("--min-memory-gib", o.min_memory_gib, "Only GPUs with at least this memory");
  cmd->add_option("--gpu-memory", o.gpu_memory,
                  "The most GPU memory it uses per GPU (20GiB): it may then run beside a "
                  "quiet holder with that much free, and is stopped if it uses more");
  cmd->add_option("--cpus", o.cpus,
                  "Host CPUs it may use (2, 0.5): placed only where that many are "
                  "unclaimed, held to it by its cgroup");
  cmd->add_option("--mem", o.memory,
                  "Host memory it may use (16G, 512M): placed only where that much is "
                  "unclaimed; it is killed if it uses more");
  cmd->add_option("--gpu-model", o.gpu_models, "Allowed model (repeatable), e.g. A100");
  cmd->add_option("--max-runtime", o.max_runtime_s, "Seconds before it is killed");
  cmd->add_option("-J,--job-name", o.name,
                  "A name for people and for singleton (default: the program's name)");
  cmd->add_option("--project", o.project, "Project, for fair share and reports");
  cmd->add_option("--label", o.labels, "key=value (repeatable)");
  cmd->add_option("--env", o.env, "NAME=value for the job (repeatable)");
  cmd->add_option("--workdir", o.workdir, "Working directory (default: the current one)");
}

// Where a batch job runs: on the host, or in a container (docs/jobs.md).
void AddContainerOptions(CLI::App* cmd, JobOptions& o) {
  cmd->add_option("--image", o.image,
                  "Run it in this OCI image, with podman as you (rootless), its GPUs passed "
                  "by CDI");
  cmd->add_option("--sif", o.sif, "Run it in this Apptainer image file (an absolute path)");
  cmd->add_option("--mount", o.mounts,
                  "SRC:DST[:ro]: a host path the container sees at DST (repeatable)");
}

}  // namespace

JobCommands AddJobCommands(CLI::App& app, JobOptions& o) {
  JobCommands c{};
  c.submit = app.add_subcommand("submit", "Queue a job: gleaner submit [options] -- CMD ARGS...");
  AddResourceOptions(c.submit, o);
  AddContainerOptions(c.submit, o);
  c.submit->add_option("--dag", o.dag,
                       "Submit the jobs of a DAG file, each after those it names "
                       "(docs/jobs.md, DAG files)");
  c.submit
      ->add_option("--nodes", o.nodes,
                   "A gang over this many nodes, --gpus on each, started and stopped together "
                   "with MASTER_ADDR, RANK, WORLD_SIZE and a hostfile (docs/gangs.md)")
      ->capture_default_str();
  c.submit->add_flag("--one-rack", o.one_rack,
                     "A gang's nodes must all be under one rack (otherwise one is preferred)");
  c.submit->add_option("--max-gpus", o.max_gpus,
                       "Elastic: take up to this many when idle ones are there");
  c.submit->add_flag("--can-shrink", o.can_shrink,
                     "Elastic: may restart on fewer GPUs (not below --gpus) when some are "
                     "taken back");
  c.submit->add_option("--priority-class", o.priority_class, "critical, normal or opportunistic")
      ->check(CLI::IsMember({"critical", "normal", "opportunistic"}))
      ->capture_default_str();
  c.submit->add_option("--priority", o.priority, "-1000..1000 within the class");
  c.submit->add_flag("--not-preemptible", o.not_preemptible, "Never vacate it");
  c.submit->add_option("--checkpoint-signal", o.checkpoint_signal, "Signal sent when it must leave")
      ->capture_default_str();
  c.submit->add_option("--grace", o.grace_s, "Seconds from that signal to SIGKILL")
      ->capture_default_str();
  c.submit->add_option("--expected-runtime", o.expected_runtime_s, "Seconds it usually takes");
  c.submit->add_option("--array", o.array, "A sweep: 0-99%8 (indices, at most 8 at once)");
  c.submit->add_option("--after", o.after, "Start after this job succeeded (repeatable)");
  c.submit
      ->add_option("--dependency", o.dependency,
                   "As Slurm's: afterok:ID[:ID...] (succeeded), afterany:ID (ended), "
                   "afternotok:ID (failed or cancelled), an array's id for all its tasks, "
                   "singleton (after the earlier jobs of its name), comma-separated "
                   "(repeatable)")
      ->type_name("KIND:ID");
  c.run = app.add_subcommand(
      "run",
      "Run a command on an idle GPU with your terminal attached, like srun --pty: "
      "gleaner run --gpus 1 --pty -- bash (docs/jobs.md, interactive sessions)");
  AddResourceOptions(c.run, o);
  c.run->add_flag("--pty", o.pty,
                  "Accepted for srun's sake: a session always has a terminal, and yours is "
                  "put in raw mode while attached");
  c.run
      ->add_option("--grace", o.grace_s,
                   "Seconds between the warning on your terminal and the end, when the "
                   "GPU must be given back")
      ->capture_default_str();
  c.notebook = app.add_subcommand(
      "notebook",
      "Start Jupyter (jupyter lab, where installed) on an idle GPU as a job and print its URL "
      "(docs/jobs.md, notebooks)");
  AddResourceOptions(c.notebook, o);
  AddContainerOptions(c.notebook, o);
  c.queue = app.add_subcommand("queue", "Jobs waiting and running (--all: finished ones too)");
  c.queue->add_flag("--all", o.all, "Include finished jobs");
  c.queue->add_option("--state", o.states, "Only these states: queued,held,running,...");
  c.queue->add_option("--user", o.user, "Only this user's jobs");
  c.queue->add_option("--limit", o.limit, "At most this many, oldest first (0: all)")
      ->capture_default_str();
  c.show = app.add_subcommand("show", "One job in full");
  c.show->add_option("id", o.id, "Job id")->required();
  c.show->add_flag("--events", o.events, "Its history, oldest first, instead of the job");
  c.cancel = app.add_subcommand("cancel", "Cancel a job (yours; any, as root)");
  c.cancel->add_option("id", o.id, "Job id")->required();
  c.cancel->add_flag("--array", o.cancel_array, "Every task of the job's array not yet ended");
  c.hold = app.add_subcommand("hold", "Keep a queued job from starting until released");
  c.hold->add_option("id", o.id, "Job id")->required();
  c.release = app.add_subcommand("release", "Let a held job start again");
  c.release->add_option("id", o.id, "Job id")->required();
  c.logs = app.add_subcommand("logs", "A job's output (stdout; --err for stderr)");
  c.logs->add_option("id", o.id, "Job id")->required();
  c.logs->add_flag("-f,--follow", o.follow, "Keep printing until the job ends");
  c.logs->add_flag("--err", o.stderr_stream, "Standard error instead of standard output");
  c.keep = app.add_subcommand(
      "keep", "Your process holds this GPU idle: do not park it until it computes again");
  c.keep->add_option("gpu", o.gpu, "GPU index or UUID")->required();
  c.unpark = app.add_subcommand("unpark", "Bring your parked process back onto its GPU now");
  c.unpark->add_option("gpu", o.gpu, "GPU index or UUID")->required();
  c.unpark->add_flag("--give-up", o.give_up,
                     "Root: stop restoring its parked process; it stays frozen in host memory "
                     "for its user to end, and the GPU is free");
  c.unpark->add_flag("--kill", o.kill_holder,
                     "Root: give up on its parked process and end it (SIGKILL)");
  for (CLI::App* cmd : {c.submit, c.run, c.notebook, c.queue, c.show, c.cancel, c.hold, c.release,
                        c.logs, c.keep, c.unpark}) {
    cmd->add_flag("--json", o.json, "JSON output");
    cmd->add_option("--data-dir", o.data_dir, "Where `gleaner up` keeps its state");
  }
  // A repeatable option takes one value each time: otherwise CLI11 reads
  // `--env X=1 -- sh -c ...` as ending the option's list at `--`, and then
  // takes `-c` for an option of gleaner's.
  for (CLI::App* cmd : {c.submit, c.run, c.notebook}) {
    for (CLI::Option* option : cmd->get_options()) {
      if (!option->get_positional()) option->allow_extra_args(false);
    }
  }
  return c;
}

core::Result<json> SubmitToApi(const net::Endpoint& api, const std::string& token,
                               const sched::JobSpec& spec) {
  GLEANER_ASSIGN_OR_RETURN(
      const auto answer,
      net::HttpCall(api, "POST", "/v1/jobs", sched::JobSpecToJson(spec).dump(), token));
  const json doc = core::ParseUntrustedJson<json>(answer.second);
  if (answer.first >= 400) {
    const std::string message = doc.is_object() && doc.contains("error")
                                    ? doc["error"].value("message", answer.second)
                                    : answer.second;
    return answer.first == 400 ? core::InvalidArgument(message) : core::Unavailable(message);
  }
  if (doc.is_discarded()) return core::Internal("gleaner answered with something not JSON");
  return doc;
}

namespace {

// Submits `spec` to the running gleaner, or onto the data directory's state
// where none runs; the job as the API answers it.
core::Result<json> SubmitSpec(const JobOptions& o, const sched::JobSpec& spec) {
  GLEANER_ASSIGN_OR_RETURN(const std::optional<net::Endpoint> api, Api(o));
  if (api) return SubmitToApi(*api, o.token, spec);
  GLEANER_ASSIGN_OR_RETURN(auto state, OpenState(o.data_dir));
  sched::JobLimits limits;
  // The GPUs this host has, as the running gleaner last judged them.
  if (auto verdicts = state->LatestVerdicts(); verdicts.ok() && !verdicts->empty()) {
    limits.max_gpus = static_cast<int>(verdicts->size());
  }
  GLEANER_RETURN_IF_ERROR(sched::ValidateJobSpec(spec, limits));
  const uint32_t uid = static_cast<uint32_t>(getuid());
  GLEANER_ASSIGN_OR_RETURN(
      const std::vector<store::JobRecord> saved,
      state->SubmitAll({{agent::UserName(uid), uid, spec, ""}}, core::RealClock().Now()));
  json doc = RecordToJson(saved.front());
  if (spec.array) doc["array_tasks"] = saved.size();
  return doc;
}

}  // namespace

core::Result<sched::JobSpec> SpecFromOptions(const JobOptions& o) {
  sched::JobSpec spec;
  spec.command = o.command;
  spec.gpus = o.gpus;
  spec.nodes = o.nodes;
  spec.one_rack = o.one_rack;
  spec.max_gpus = o.max_gpus;
  spec.can_shrink = o.can_shrink;
  spec.min_gpu_memory = core::Bytes(static_cast<uint64_t>(o.min_memory_gib * (1ULL << 30)));
  if (!o.gpu_memory.empty()) {
    auto memory = core::ParseBytes(o.gpu_memory);
    if (!memory.ok()) return core::InvalidArgument("--gpu-memory: " + memory.status().message());
    spec.gpu_memory = *memory;
  }
  if (o.cpus < 0 || o.cpus > 1e6 || std::abs(o.cpus * 1000 - std::round(o.cpus * 1000)) > 1e-6) {
    return core::InvalidArgument(
        "--cpus: a number of CPUs like 2 or 0.5 (in "
        "thousandths at the finest)");
  }
  spec.cpu_milli = std::llround(o.cpus * 1000);
  if (!o.memory.empty()) {
    // Slurm reads a bare --mem number as megabytes, ParseBytes as bytes:
    // neither guess is safe, so a unit is required.
    if (std::isdigit(static_cast<unsigned char>(o.memory.back()))) {
      return core::InvalidArgument("--mem " + o.memory.substr(0, 32) +
                                   ": give a unit, like 16G or 512M");
    }
    auto memory = core::ParseBytes(o.memory);
    if (!memory.ok()) return core::InvalidArgument("--mem: " + memory.status().message());
    spec.memory = *memory;
  }
  spec.gpu_models = o.gpu_models;
  spec.priority_class = o.priority_class == "critical"        ? sched::PriorityClass::kCritical
                        : o.priority_class == "opportunistic" ? sched::PriorityClass::kOpportunistic
                                                              : sched::PriorityClass::kNormal;
  spec.priority = o.priority;
  spec.preemptible = !o.not_preemptible && spec.priority_class != sched::PriorityClass::kCritical;
  spec.checkpoint_signal = o.checkpoint_signal;
  spec.grace = Seconds(o.grace_s);
  if (o.max_runtime_s > 0) spec.max_runtime = Seconds(o.max_runtime_s);
  if (o.expected_runtime_s > 0) spec.expected_runtime = Seconds(o.expected_runtime_s);
  if (!o.array.empty()) {
    auto a = sched::ParseArraySpec(o.array);
    if (!a.ok()) return a.status();
    spec.array = *a;
  }
  spec.after_success = o.after;
  for (const std::string& text : o.dependency) {
    GLEANER_RETURN_IF_ERROR(sched::AddDependencies(text, &spec));
  }
  spec.name = o.name;
  if (spec.name.empty() && spec.singleton && !spec.command.empty()) {
    // As Slurm names a job after its script.
    spec.name = std::filesystem::path(spec.command.front()).filename().string();
  }
  spec.project = o.project;
  for (const auto& [list, target] :
       {std::pair{&o.labels, &spec.labels}, std::pair{&o.env, &spec.env}}) {
    for (const std::string& kv : *list) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        return core::InvalidArgument("\"" + kv + "\": expected NAME=value");
      }
      (*target)[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  if (!o.image.empty() || !o.sif.empty() || !o.mounts.empty()) {
    sched::ContainerSpec c{o.image, o.sif, {}};
    for (const std::string& text : o.mounts) {
      GLEANER_ASSIGN_OR_RETURN(sched::ContainerMount m, sched::ParseContainerMount(text));
      c.mounts.push_back(std::move(m));
    }
    spec.container = std::move(c);
  }
  // A container starts where its image says unless told: this directory
  // is the host's, which the container may not have.
  std::error_code ec;
  spec.working_dir = !o.workdir.empty() ? o.workdir
                     : spec.container   ? ""
                                        : std::filesystem::current_path(ec).string();
  return spec;
}

int RunSubmit(const JobOptions& o, std::ostream& out, std::ostream& err) {
  if (!o.dag.empty()) {
    if (!o.command.empty()) {
      err << "gleaner: --dag FILE names the jobs: give no command after --\n";
      return kExitUsage;
    }
    return RunSubmitDag(o, out, err);
  }
  if (o.command.empty()) {
    err << "gleaner: give the command after --: gleaner submit --gpus 1 -- python train.py (or "
           "--dag FILE)\n";
    return kExitUsage;
  }
  auto spec = SpecFromOptions(o);
  if (!spec.ok()) return Fail(err, spec.status());
  auto doc = SubmitSpec(o, *spec);
  if (!doc.ok()) return Fail(err, doc.status());
  out << (o.json ? doc->dump(2) : Submitted(*doc)) << "\n";
  return kExitOk;
}

int RunSubmitDag(const JobOptions& o, std::ostream& out, std::ostream& err) {
  std::ifstream in(o.dag, std::ios::binary);
  if (!in) return Fail(err, core::InvalidArgument("cannot read the DAG file " + o.dag));
  std::stringstream text;
  text << in.rdbuf();
  auto jobs = ParseDagFile(text.str(), o.dag);
  if (!jobs.ok()) return Fail(err, jobs.status());
  std::error_code ec;
  const std::string here = std::filesystem::current_path(ec).string();
  std::map<std::string, std::vector<sched::JobId>> ids;  // by the file's job names
  json submitted = json::array();
  for (DagJob& job : *jobs) {
    for (const auto& [kind, other] : job.after) {
      std::vector<sched::JobId>& list =
          kind == sched::DependencyKind::kAfterOk    ? job.spec.after_success
          : kind == sched::DependencyKind::kAfterAny ? job.spec.after_any
                                                     : job.spec.after_failure;
      list.insert(list.end(), ids[other].begin(), ids[other].end());
    }
    if (job.spec.working_dir.empty()) job.spec.working_dir = here;
    auto doc = SubmitSpec(o, job.spec);
    if (!doc.ok()) {
      std::string before;
      for (const json& d : submitted) before += (before.empty() ? "" : ", ") + d["id"].dump();
      err << "gleaner: " << o.dag << ": job \"" << job.spec.name << "\": " << doc.status().message()
          << "\n";
      if (!before.empty()) {
        err << "gleaner: jobs " << before
            << " were submitted before it; cancel them to start over\n";
      }
      return doc.status().code() == core::StatusCode::kInvalidArgument ? kExitBadInput
                                                                       : kExitFailure;
    }
    if (!doc->contains("id") || !(*doc)["id"].is_number_integer()) {
      return Fail(err, core::Internal("gleaner answered a submit without the job's id"));
    }
    ids[job.group].push_back((*doc)["id"].get<sched::JobId>());
    if (!o.json) out << Submitted(*doc) << " (" << job.spec.name << ")\n";
    submitted.push_back(std::move(*doc));
  }
  if (o.json) out << submitted.dump(2) << "\n";
  return kExitOk;
}

namespace {

// GET /v1/jobs page after page (the server answers one bounded page at a
// time) until `limit` jobs (0: all) or the last page.
core::Result<json> FetchJobs(const net::Endpoint& api, const JobOptions& o) {
  std::string filters = o.all ? "all=1" : "";
  if (!o.states.empty()) filters = "state=" + QueryEscape(o.states);
  if (!o.user.empty()) filters += (filters.empty() ? "" : "&") + ("user=" + QueryEscape(o.user));
  json jobs = json::array();
  int64_t after = 0;
  for (;;) {
    const int64_t want =
        o.limit == 0
            ? server::kMaxJobPage
            : std::min<int64_t>(server::kMaxJobPage, o.limit - static_cast<int64_t>(jobs.size()));
    std::string target = "/v1/jobs?limit=" + std::to_string(want);
    if (!filters.empty()) target += "&" + filters;
    if (after > 0) target += "&after=" + std::to_string(after);
    GLEANER_ASSIGN_OR_RETURN(auto answer, net::HttpCall(api, "GET", target, "", o.token));
    const json doc = core::ParseUntrustedJson<json>(answer.second);
    if (answer.first >= 400 || !doc.is_object() || !doc.contains("jobs") ||
        !doc["jobs"].is_array()) {
      const std::string message = doc.is_object() && doc.contains("error")
                                      ? doc["error"].value("message", answer.second)
                                      : answer.second;
      return answer.first == 400 ? core::InvalidArgument(message) : core::Internal(message);
    }
    for (const json& job : doc["jobs"]) jobs.push_back(job);
    if (!doc.contains("next") || !doc["next"].is_number_integer() ||
        (o.limit > 0 && static_cast<int64_t>(jobs.size()) >= o.limit)) {
      return jobs;
    }
    after = doc["next"].get<int64_t>();
  }
}

}  // namespace

int RunQueue(const JobOptions& o, std::ostream& out, std::ostream& err) {
  if (o.limit < 0) return Fail(err, core::InvalidArgument("--limit: expected 0 (all) or more"));
  if (o.all && !o.states.empty()) {
    return Fail(err, core::InvalidArgument("give --all or --state, not both"));
  }
  auto api = Api(o);
  if (!api.ok()) return Fail(err, api.status());
  json doc = json::array();
  if (*api) {
    auto jobs = FetchJobs(**api, o);
    if (!jobs.ok()) return Fail(err, jobs.status());
    doc = std::move(jobs).value();
  } else {
    auto state = OpenState(o.data_dir);
    if (!state.ok()) return Fail(err, state.status());
    std::map<std::string, std::string> params;
    if (o.all) params["all"] = "1";
    if (!o.states.empty()) params["state"] = o.states;
    if (!o.user.empty()) params["user"] = o.user;
    auto query = server::ParseJobListQuery(params);
    if (!query.ok()) return Fail(err, query.status());
    query->limit = o.limit;
    auto jobs = (*state)->Find(*query);
    if (!jobs.ok()) return Fail(err, jobs.status());
    for (const store::JobRecord& r : *jobs) doc.push_back(RecordToJson(r));
  }
  out << (o.json ? json{{"jobs", doc}}.dump(2) : QueueTable(doc)) << "\n";
  return kExitOk;
}

int RunShow(const JobOptions& o, std::ostream& out, std::ostream& err) {
  auto api = Api(o);
  if (!api.ok()) return Fail(err, api.status());
  if (o.events) {
    const auto print = [&o](const json& events) {
      return o.json ? json{{"events", events}}.dump(2) : EventTable(events);
    };
    if (*api) {
      return CallApi(
          **api, o.token, "GET", "/v1/jobs/" + std::to_string(o.id) + "/events", "", false,
          [&](const json& j) { return print(j["events"]); }, out, err);
    }
    auto state = OpenState(o.data_dir);
    if (!state.ok()) return Fail(err, state.status());
    if (auto job = (*state)->Get(o.id); !job.ok()) return Fail(err, job.status());
    store::EventQuery q;
    q.job = o.id;
    auto events = (*state)->Events(q);
    if (!events.ok()) return Fail(err, events.status());
    json list = json::array();
    for (const store::EventRecord& e : *events) list.push_back(server::EventToJson(e));
    out << print(list) << "\n";
    return kExitOk;
  }
  if (*api) {
    return CallApi(
        **api, o.token, "GET", "/v1/jobs/" + std::to_string(o.id), "", true,
        [](const json& j) { return j.dump(2); }, out, err);
  }
  auto state = OpenState(o.data_dir);
  if (!state.ok()) return Fail(err, state.status());
  auto job = (*state)->Get(o.id);
  if (!job.ok()) return Fail(err, job.status());
  out << RecordToJson(*job).dump(2) << "\n";
  return kExitOk;
}

int RunCancel(const JobOptions& o, std::ostream& out, std::ostream& err) {
  auto api = Api(o);
  if (!api.ok()) return Fail(err, api.status());
  if (*api) {
    return CallApi(
        **api, o.token, "POST",
        "/v1/jobs/" + std::to_string(o.id) + "/cancel" + (o.cancel_array ? "?array=1" : ""), "",
        o.json,
        [&o](const json& j) {
          if (!o.cancel_array) return "cancelled job " + std::to_string(o.id);
          return "cancelled " + std::to_string(j["cancelled"].size()) + " task(s) of array " +
                 std::to_string(j["array_id"].get<int64_t>());
        },
        out, err);
  }
  if (o.cancel_array) {
    return Fail(err, core::Unavailable("cancelling an array needs a running `gleaner up`"));
  }
  auto state = OpenState(o.data_dir);
  if (!state.ok()) return Fail(err, state.status());
  auto job = (*state)->Get(o.id);
  if (!job.ok()) return Fail(err, job.status());
  if (job->uid != getuid() && getuid() != 0) {
    return Fail(err, core::PermissionDenied("job " + std::to_string(o.id) + " belongs to " +
                                            job->user + "; only they (or root) may cancel it"));
  }
  store::JobUpdate u;
  u.actor = agent::UserName(static_cast<uint32_t>(getuid()));
  u.reason = "cancelled by " + u.actor;
  auto moved = (*state)->Transition(o.id, job->state, store::JobState::kCancelled, u);
  if (!moved.ok()) return Fail(err, moved.status());
  out << (o.json ? RecordToJson(*moved).dump(2) : "cancelled job " + std::to_string(o.id)) << "\n";
  return kExitOk;
}

int RunHoldRelease(const JobOptions& o, const std::string& action, std::ostream& out,
                   std::ostream& err) {
  auto api = RunningApi(o);
  if (!api.ok()) return Fail(err, api.status());
  return CallApi(
      *api, o.token, "POST", "/v1/jobs/" + std::to_string(o.id) + "/" + action, "", o.json,
      [&](const json& j) {
        return "job " + std::to_string(o.id) + " " + j["state"].get<std::string>();
      },
      out, err);
}

int RunParking(const JobOptions& o, observe::HolderAsk ask, std::ostream& out, std::ostream& err) {
  if (o.gpu.empty() || o.gpu.size() > 96 ||
      o.gpu.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") !=
          std::string::npos) {
    return Fail(err, core::InvalidArgument("\"" + o.gpu +
                                           "\" is not a GPU: give its index (0) or its UUID "
                                           "(GPU-...), as `gleaner gpus` shows them"));
  }
  auto api = RunningApi(o);
  if (!api.ok()) return Fail(err, api.status());
  return CallApi(
      *api, o.token, "POST", "/v1/gpus/" + o.gpu + "/" + std::string(observe::HolderAskName(ask)),
      "", o.json,
      [&](const json& j) { return "GPU " + o.gpu + ": " + j["message"].get<std::string>(); }, out,
      err);
}

int RunLogs(const JobOptions& o, std::ostream& out, std::ostream& err) {
  auto api = RunningApi(o);
  if (!api.ok()) return Fail(err, api.status());
  uint64_t offset = 0;
  for (;;) {
    const std::string target = "/v1/jobs/" + std::to_string(o.id) +
                               "/logs?stream=" + (o.stderr_stream ? "err" : "out") +
                               "&offset=" + std::to_string(offset);
    auto answer = net::HttpCall(*api, "GET", target, "", o.token);
    if (!answer.ok()) return Fail(err, answer.status());
    const json doc = core::ParseUntrustedJson<json>(answer->second);
    if (answer->first >= 400 || doc.is_discarded()) {
      err << "gleaner: "
          << (doc.is_object() && doc.contains("error") ? doc["error"].value("message", "")
                                                       : answer->second)
          << "\n";
      return kExitFailure;
    }
    const std::string data = doc["data"].get<std::string>();
    out << data;
    out.flush();
    offset = doc["offset"].get<uint64_t>();
    const std::string state = doc["state"].get<std::string>();
    const bool ended = state == "succeeded" || state == "failed" || state == "cancelled";
    if (!o.follow || (data.empty() && ended)) return kExitOk;
    if (data.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace gleaner::cli
