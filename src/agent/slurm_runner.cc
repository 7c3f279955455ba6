#include "agent/slurm_runner.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "agent/account.h"
#include "agent/executor.h"
#include "agent/run_program.h"
#include "core/format.h"

namespace gleaner::agent {
namespace {

constexpr const char* kJobNamePrefix = "gleaner-";

// `text` as one word of a POSIX shell command line.
std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool IsShellName(const std::string& name) {
  return !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
         std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// Slurm states in which a job still waits for, or holds, its allocation.
bool StillSlurms(const std::string& state) {
  return state == "PENDING" || state == "RUNNING" || state == "CONFIGURING" ||
         state == "COMPLETING" || state == "SUSPENDED" || state == "RESIZING" ||
         state == "SIGNALING" || state == "STAGE_OUT";
}

// Requeued by Slurm: preempted, or waiting again after it ran.
bool Requeued(const slurm::SlurmJob& job) {
  return job.state == "PREEMPTED" || job.state.rfind("REQUEUE", 0) == 0 ||
         (job.state == "PENDING" && job.restart_count > 0);
}

}  // namespace

ProgramOptions SlurmCommandOptions(const slurm::SlurmSettings& settings) {
  ProgramOptions options;
  options.timeout = settings.timeout;
  if (!settings.conf.empty()) options.env.push_back("SLURM_CONF=" + settings.conf);
  return options;
}

SlurmRunner::SlurmRunner(slurm::SlurmSettings settings, std::string node, FetchSlurmJobs fetch,
                         const core::Clock& clock)
    : settings_(std::move(settings)),
      node_(std::move(node)),
      fetch_(std::move(fetch)),
      clock_(clock) {}

core::Duration SlurmRunner::Settle() const {
  return std::max<core::Duration>(3 * settings_.poll_interval, core::Seconds(10));
}

bool SlurmRunner::Poll(bool now) {
  const core::TimePoint t = clock_.Now();
  if (!now && polled_at_ && t - *polled_at_ < settings_.poll_interval) return jobs_.has_value();
  polled_at_ = t;
  core::Result<slurm::SlurmJobsDocument> doc = fetch_();
  if (!doc.ok()) {
    poll_error_ = doc.status().message();
    jobs_.reset();
    return false;
  }
  poll_error_.clear();
  jobs_ = std::move(doc).value();
  return true;
}

const slurm::SlurmJob* SlurmRunner::Find(const std::string& slurm_id) const {
  if (!jobs_) return nullptr;
  for (const slurm::SlurmJob& j : jobs_->jobs) {
    if (j.id == slurm_id) return &j;
  }
  return nullptr;
}

core::Status SlurmRunner::Cancel(const std::string& slurm_id, std::optional<int> signal) {
  std::vector<std::string> argv = {settings_.scancel};
  // --full: the batch shell as well as the steps, so a job that is a plain
  // script hears the checkpoint signal too.
  if (signal) argv.insert(argv.end(), {"--signal=" + std::to_string(*signal), "--full"});
  argv.push_back(slurm_id);
  auto run = RunProgram(argv, SlurmCommandOptions(settings_));
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return core::Unavailable("scancel " + slurm_id + " failed: " + Excerpt(run->err));
  }
  return core::Status::Ok();
}

core::Result<RunningJob> SlurmRunner::Launch(const LaunchRequest& req) {
  if (req.gang) {
    return core::FailedPrecondition(
        "a gang over several nodes cannot run through the Slurm bridge, whose jobs each hold one "
        "host's GPUs; submit it to Slurm itself (sbatch --nodes)");
  }
  // Whatever goes wrong with one job's launch fails that job, never the
  // daemon.
  try {
    return Submit(req);
  } catch (const std::exception& e) {
    return core::Internal("cannot submit job " + std::to_string(req.id) + ": " + e.what());
  }
}

core::Result<RunningJob> SlurmRunner::Submit(const LaunchRequest& req) {
  if (running_.contains(req.id)) {
    return core::FailedPrecondition("job " + std::to_string(req.id) + " is already running");
  }
  if (req.spec.command.empty()) return core::InvalidArgument("job has no command");
  // The batch script: the spec's environment, then gleaner's variables, the
  // command, every word quoted. Slurm sets CUDA_VISIBLE_DEVICES to the GPUs
  // it allocates, and it and gleaner's own are not the spec's to set.
  std::string script;
  for (const auto& [name, value] : req.spec.env) {
    if (!IsShellName(name)) {
      return core::InvalidArgument("environment variable name \"" + name +
                                   "\" cannot be passed through Slurm; use letters, digits and _");
    }
    if (name == "CUDA_VISIBLE_DEVICES" || name.rfind("SLURM_", 0) == 0 ||
        name.rfind("GLEANER_", 0) == 0) {
      return core::InvalidArgument("environment variable " + name +
                                   " is set by Slurm or gleaner, not by the job");
    }
    script += "export " + name + "=" + Quote(value) + "\n";
  }
  script += "export GLEANER_JOB_ID=" + std::to_string(req.id) + "\n";
  if (req.array_id) {
    script += "export GLEANER_ARRAY_ID=" + std::to_string(*req.array_id) +
              " GLEANER_ARRAY_TASK_ID=" + std::to_string(req.array_index) + "\n";
  }
  script += "exec";
  for (const std::string& word : req.spec.command) script += " " + Quote(word);
  GLEANER_ASSIGN_OR_RETURN(Account account, LookUpAccount(req.uid));

  // The logs are made by gleaner, given to the user, and appended to by
  // Slurm as the user: a link planted in their place is refused here.
  std::error_code ec;
  std::filesystem::create_directories(req.log_dir, ec);
  RunningJob job;
  job.id = req.id;
  job.uid = account.uid;
  job.started_at = clock_.Now();
  job.stdout_path = req.log_dir + "/" + std::to_string(req.id) + ".out";
  job.stderr_path = req.log_dir + "/" + std::to_string(req.id) + ".err";
  for (const char* suffix : {".out", ".err"}) {
    GLEANER_ASSIGN_OR_RETURN(
        int fd, OpenJobLog(req.log_dir, std::to_string(req.id) + suffix, account.uid, account.gid));
    close(fd);
  }

  const std::string workdir = req.spec.working_dir.empty() ? account.home : req.spec.working_dir;
  std::vector<std::string> argv = {
      settings_.sbatch, "--parsable",
      "--job-name=" + std::string(kJobNamePrefix) + std::to_string(req.id), "--comment=" + Tag(),
      "--partition=" + settings_.bridge.partition, "--nodelist=" + node_, "--nodes=1", "--ntasks=1",
      "--gres=gpu:" + std::to_string(req.gpus.size()), "--output=" + job.stdout_path,
      "--error=" + job.stderr_path, "--open-mode=append", "--chdir=" + workdir, "--requeue",
      // Slurm would otherwise hand the job root's limits, from sbatch.
      "--propagate=NONE"};
  if (!settings_.bridge.qos.empty()) argv.push_back("--qos=" + settings_.bridge.qos);
  if (!settings_.bridge.account.empty()) argv.push_back("--account=" + settings_.bridge.account);
  if (req.spec.max_runtime) {
    const int64_t minutes = std::chrono::ceil<std::chrono::minutes>(*req.spec.max_runtime).count();
    argv.push_back("--time=" + std::to_string(std::max<int64_t>(1, minutes)));
  }
  argv.push_back("--wrap=" + script);

  // sbatch runs as the user, with a login-like environment (the job
  // inherits it): nothing of root's reaches the job.
  ProgramOptions options = SlurmCommandOptions(settings_);
  options.clean_env = true;
  options.as = account;
  options.env.insert(options.env.end(),
                     {"HOME=" + account.home, "USER=" + account.name, "LOGNAME=" + account.name,
                      "SHELL=" + (account.shell.empty() ? std::string("/bin/sh") : account.shell),
                      "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"});
  auto run = RunProgram(argv, options);
  if (!run.ok()) return run.status().WithContext("submitting to Slurm");
  std::string id = run->out.substr(0, run->out.find_first_of(";\n"));
  if (run->exit_code != 0 || id.empty() ||
      !std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return core::FailedPrecondition("sbatch refused the job (exit " +
                                    std::to_string(run->exit_code) +
                                    "): " + Excerpt(run->err.empty() ? run->out : run->err));
  }
  job.slurm_job_id = id;
  started_.erase(req.id);
  job.slurm_state =
      "Slurm job " + id + " submitted to partition " + settings_.bridge.partition + " on " + node_;
  polled_at_.reset();  // read its state at the next Reap
  return running_[req.id] = job;
}

std::optional<JobExit> SlurmRunner::Ended(sched::JobId id, const slurm::SlurmJob& job) const {
  JobExit e;
  e.id = id;
  e.at = clock_.Now();
  if (Requeued(job)) {
    e.signal = SIGTERM;
    e.requeued_for =
        "requeued by Slurm (job " + job.id + " " + job.state +
        (job.state_reason.empty() || job.state_reason == "None" ? "" : ", " + job.state_reason) +
        ")";
    return e;
  }
  if (StillSlurms(job.state)) return std::nullopt;
  e.exit_code = job.exit_code;
  e.signal = job.exit_signal;
  if (job.state == "COMPLETED" && !e.exit_code && !e.signal) e.exit_code = 0;
  // Ended by Slurm without an exit status (TIMEOUT, NODE_FAIL...): a kill.
  if (!e.exit_code && !e.signal) e.signal = SIGKILL;
  if (job.state != "COMPLETED" && e.exit_code == 0) e.exit_code = 1;
  return e;
}

std::vector<JobExit> SlurmRunner::Reap() {
  std::vector<JobExit> ended;
  // Read even with no job running: which GPUs Slurm holds decides lending.
  const std::optional<core::TimePoint> last = polled_at_;
  if (!Poll(false)) return ended;
  if (polled_at_ != last) CancelUnclaimed();
  for (auto it = running_.begin(); it != running_.end();) {
    RunningJob& job = it->second;
    const slurm::SlurmJob* sj = Find(job.slurm_job_id);
    if (sj == nullptr) {
      // Slurm forgot it (past MinJobAge, or its state was lost).
      JobExit e;
      e.id = it->first;
      e.at = clock_.Now();
      e.status_unknown = true;
      ended.push_back(e);
      started_.erase(it->first);
      it = running_.erase(it);
      continue;
    }
    std::optional<JobExit> e = Ended(it->first, *sj);
    // Submitted on GPUs gleaner judged idle, but Slurm will not start it
    // there (their GPUs are Slurm's, a limit holds it): back to gleaner.
    if (!e && sj->state == "PENDING" && clock_.Now() - job.started_at > Settle()) {
      e = JobExit{it->first,
                  std::nullopt,
                  SIGTERM,
                  clock_.Now(),
                  false,
                  "Slurm did not start it on " + node_ + " within " +
                      core::FormatDuration(Settle()) + " (job " + sj->id + " PENDING" +
                      (sj->state_reason.empty() ? "" : ", " + sj->state_reason) + ")"};
    }
    if (e) {
      // Requeued: out of Slurm's queue, back to gleaner's; Slurm's own
      // jobs get the GPUs first.
      if (!e->requeued_for.empty()) {
        Cancel(sj->id, std::nullopt).IgnoreError();
        settle_until_ = clock_.Now() + Settle();
      }
      started_.erase(it->first);
      ended.push_back(*e);
      it = running_.erase(it);
      continue;
    }
    if (sj->HoldsResources()) started_.insert(it->first);
    // A job printing forever must not fill the disk under the database.
    TrimLog(job.stdout_path, Executor::kDefaultMaxLogBytes);
    TrimLog(job.stderr_path, Executor::kDefaultMaxLogBytes);
    std::string state = "Slurm job " + sj->id + " " + sj->state;
    if (sj->state == "PENDING" && !sj->state_reason.empty() && sj->state_reason != "None") {
      state += " (" + sj->state_reason + ")";
    }
    if (sj->HoldsResources()) state += " on " + node_;
    job.slurm_state = state + " in partition " + sj->partition;
    ++it;
  }
  return ended;
}

core::Status SlurmRunner::Signal(sched::JobId id, int signal) {
  const auto it = running_.find(id);
  if (it == running_.end()) return core::NotFound("job " + std::to_string(id) + " is not running");
  // SIGKILL is the end: Slurm's own stop (its KillWait, then SIGKILL). A
  // job Slurm has not started has nothing to checkpoint: it just leaves.
  const bool stop = signal == SIGKILL || !started_.contains(id);
  return Cancel(it->second.slurm_job_id, stop ? std::nullopt : std::optional<int>(signal));
}

core::Status SlurmRunner::Adopt(const JobHandle& handle) {
  if (handle.slurm_job_id.empty()) {
    return core::NotFound("job " + std::to_string(handle.id) + " was not run through Slurm");
  }
  if (!Poll(true)) return core::Unavailable("Slurm did not answer: " + poll_error_);
  const slurm::SlurmJob* sj = Find(handle.slurm_job_id);
  if (sj == nullptr || sj->name != kJobNamePrefix + std::to_string(handle.id) ||
      Ended(handle.id, *sj)) {
    return core::NotFound("Slurm job " + handle.slurm_job_id + " no longer runs job " +
                          std::to_string(handle.id));
  }
  RunningJob job;
  job.id = handle.id;
  // A pending job's start time is Slurm's forecast: patience counts from now.
  job.started_at = sj->HoldsResources() ? sj->start_time.value_or(clock_.Now()) : clock_.Now();
  job.adopted = true;
  if (sj->HoldsResources()) started_.insert(handle.id);
  job.stdout_path = handle.log_dir + "/" + std::to_string(handle.id) + ".out";
  job.stderr_path = handle.log_dir + "/" + std::to_string(handle.id) + ".err";
  job.slurm_job_id = sj->id;
  job.uid = sj->uid;
  running_[handle.id] = job;
  return core::Status::Ok();
}

std::optional<JobExit> SlurmRunner::EndedWhileAway(const JobHandle& handle) {
  if (handle.slurm_job_id.empty() || !Poll(true)) return std::nullopt;
  const slurm::SlurmJob* sj = Find(handle.slurm_job_id);
  if (sj == nullptr || sj->name != kJobNamePrefix + std::to_string(handle.id)) return std::nullopt;
  std::optional<JobExit> e = Ended(handle.id, *sj);
  if (e && !e->requeued_for.empty()) Cancel(sj->id, std::nullopt).IgnoreError();
  return e;
}

void SlurmRunner::SweepLeftovers() {
  if (Poll(true)) CancelUnclaimed();
}

void SlurmRunner::CancelUnclaimed() {
  std::set<std::string> ours;
  for (const auto& [id, job] : running_) ours.insert(job.slurm_job_id);
  for (const slurm::SlurmJob& sj : jobs_->jobs) {
    // Submitted by this node's gleaner, claimed by no job it runs: a killed
    // gleaner's (its job requeued in gleaner's queue meanwhile), or one
    // whose sbatch timed out after Slurm took it.
    if (sj.comment == Tag() && !ours.contains(sj.id) && StillSlurms(sj.state)) {
      Cancel(sj.id, std::nullopt).IgnoreError();
    }
  }
}

std::string SlurmRunner::WhyNotLendable(const gpu::GpuSnapshot& gpu) const {
  if (settle_until_ && clock_.Now() < *settle_until_) {
    return "Slurm took back a gleaner job here: its own jobs take the GPUs first";
  }
  // Nothing is lent before Slurm has said what it holds, or while it does
  // not answer, or when a job of its answer could not be read.
  if (!jobs_)
    return poll_error_.empty() ? "Slurm not asked yet" : "Slurm does not answer: " + poll_error_;
  if (!jobs_->skipped.empty()) return "a Slurm job could not be read: " + jobs_->skipped.front();
  std::set<std::string> ours;
  for (const auto& [id, job] : running_) ours.insert(job.slurm_job_id);
  for (const slurm::SlurmJob& sj : jobs_->jobs) {
    if (!sj.HoldsResources() || ours.contains(sj.id)) continue;
    const auto here = sj.gpus_by_node.find(node_);
    if (here == sj.gpus_by_node.end()) continue;
    const auto& indices = here->second;
    if (std::find(indices.begin(), indices.end(), gpu.index) != indices.end()) {
      return "allocated to Slurm job " + sj.DisplayId() + " of " + sj.user;
    }
  }
  return "";
}

}  // namespace gleaner::agent
