#include "daemon/slurm_source.h"

#include <fstream>
#include <sstream>

#include "agent/run_program.h"
#include "core/host_name.h"
#include "net/http_client.h"

namespace gleaner::daemon {
namespace {

core::Result<std::string> ReadToken(const std::string& file) {
  std::ifstream in(file);
  if (!in) {
    return core::Unavailable("cannot read the slurmrestd token file " + file +
                             ": write one with `scontrol token username=USER lifespan=SECONDS`");
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  // `scontrol token` prints "SLURM_JWT=..."; the file may hold that line.
  if (token.rfind("SLURM_JWT=", 0) == 0) token = token.substr(10);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.empty() || token.find_first_of("\r\n\t ") != std::string::npos) {
    return core::InvalidArgument("the slurmrestd token file " + file +
                                 " must hold one token on one line");
  }
  return token;
}

core::Result<slurm::SlurmJobsDocument> FromSlurmrestd(const slurm::SlurmSettings& s) {
  auto endpoint = net::ParseServerUrl(s.slurmrestd_url);
  if (!endpoint.ok()) return endpoint.status().WithContext("[slurm] slurmrestd");
  auto token = ReadToken(s.token_file);
  if (!token.ok()) return token.status();
  endpoint->server = "slurmrestd";
  net::HttpClient client(*endpoint);
  client.set_keep_alive(false);
  client.set_headers("X-SLURM-USER-NAME: " + s.user + "\r\nX-SLURM-USER-TOKEN: " + *token + "\r\n");
  auto answer = client.Call("GET", "/slurm/" + s.api + "/jobs", "", "", s.timeout);
  if (!answer.ok()) {
    return core::Unavailable("slurmrestd at " + s.slurmrestd_url +
                             " did not answer: " + answer.status().message());
  }
  const auto& [code, body] = *answer;
  auto doc = slurm::ParseSlurmJobs(body);
  if (code == 200 && doc.ok()) return doc;
  std::string why = doc.ok() ? "" : ": " + doc.status().message();
  if (code == 401 || code == 403 || code == 500) {
    // 22.05 answers a token it refuses with 500 and a generic error.
    why += " (if the token in " + s.token_file +
           " has expired or names another user, renew it: scontrol token username=" + s.user +
           " lifespan=SECONDS)";
  }
  if (code == 404) why += " (is [slurm] api \"" + s.api + "\" the plugin slurmrestd runs?)";
  return core::Unavailable("slurmrestd answered " + std::to_string(code) + why);
}

core::Result<slurm::SlurmJobsDocument> FromSqueue(const slurm::SlurmSettings& s) {
  auto run = agent::RunProgram({s.squeue, "--json"}, agent::SlurmCommandOptions(s));
  if (!run.ok()) return run.status().WithContext("asking Slurm for its jobs");
  if (run->exit_code != 0) {
    const std::string said = agent::Excerpt(run->err);
    return core::Unavailable(s.squeue + " --json failed (exit " + std::to_string(run->exit_code) +
                             ")" + (said.empty() ? "" : ": " + said));
  }
  return slurm::ParseSlurmJobs(run->out);
}

}  // namespace

void ActOnSlurmIdleJob(const slurm::SlurmSettings& settings, const slurm::PlannedIdleAction& action,
                       store::EventStore& history, core::TimePoint now,
                       const std::function<void(const std::string&)>& log) {
  const slurm::SlurmJob& job = action.job.job;
  const bool requeue = action.action == slurm::IdleAction::kRequeue;
  const std::vector<std::string> argv =
      requeue ? std::vector<std::string>{settings.scontrol, "requeue", job.id}
              : std::vector<std::string>{settings.scancel, job.id};
  std::string failure;
  if (auto run = agent::RunProgram(argv, agent::SlurmCommandOptions(settings)); !run.ok()) {
    failure = run.status().message();
  } else if (run->exit_code != 0) {
    failure = argv[0] + " failed (exit " + std::to_string(run->exit_code) +
              "): " + agent::Excerpt(run->err);
  }
  const std::string what = std::string("Slurm job ") + job.DisplayId() + " of " +
                           (job.user.empty() ? "an unknown user" : job.user) +
                           (job.account.empty() ? "" : ", account " + job.account) + ": " +
                           action.reason;
  const std::string detail =
      failure.empty() ? what + (requeue ? "; requeued" : "; cancelled")
                      : what + "; could not " + std::string(slurm::IdleActionName(action.action)) +
                            " it: " + failure;
  log("slurm: " + detail);
  std::vector<core::GpuUuid> gpus;
  for (const slurm::AllocatedGpu& g : action.job.gpus) {
    if (!g.uuid.empty()) gpus.push_back(g.uuid);
  }
  const std::string kind = !failure.empty() ? "slurm_action_failed"
                           : requeue        ? "slurm_requeued"
                                            : "slurm_cancelled";
  auto saved = history.AppendEvent({0, now, kind, std::nullopt, job.user, "gleaner", gpus, detail});
  if (!saved.ok()) log("history: " + saved.status().message());
}

std::unique_ptr<agent::SlurmRunner> MakeBridgeRunner(const slurm::SlurmSettings& settings,
                                                     const core::Clock& clock) {
  if (!settings.enabled || !settings.bridge.enabled) return nullptr;
  return std::make_unique<agent::SlurmRunner>(
      settings, SlurmNodeName(settings), [settings] { return FetchSlurmJobs(settings); }, clock);
}

std::string SlurmNodeName(const slurm::SlurmSettings& settings) {
  if (!settings.node.empty()) return settings.node;
  const std::string host = core::Hostname();
  return host.substr(0, host.find('.'));
}

core::Result<slurm::SlurmJobsDocument> FetchSlurmJobs(const slurm::SlurmSettings& settings) {
  return settings.slurmrestd_url.empty() ? FromSqueue(settings) : FromSlurmrestd(settings);
}

SlurmPoller::SlurmPoller(slurm::SlurmSettings settings, const core::Clock& clock)
    : settings_(std::move(settings)), node_(SlurmNodeName(settings_)), clock_(clock) {
  thread_ = std::thread([this] { Run(); });
}

SlurmPoller::~SlurmPoller() {
  {
    core::MutexLock lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

SlurmPoller::Latest SlurmPoller::latest() const {
  core::MutexLock lock(mu_);
  return latest_;
}

void SlurmPoller::Run() {
  core::MutexLock lock(mu_);
  while (!stop_) {
    lock.Unlock();
    auto jobs = FetchSlurmJobs(settings_);
    const core::TimePoint now = clock_.Now();
    lock.Lock();
    if (jobs.ok()) {
      latest_.jobs = std::move(jobs).value();
      latest_.at = now;
      latest_.error.clear();
    } else {
      latest_.error = jobs.status().message();
    }
    mu_.AwaitFor(stop_cv_, settings_.poll_interval, [this] {
      mu_.AssertHeld();
      return stop_;
    });
  }
}

}  // namespace gleaner::daemon
