#include "cli/session_command.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <thread>
#include <variant>

#include "cli/api_client.h"
#include "cli/exit_codes.h"
#include "cli/terminal_relay.h"
#include "core/json_depth.h"
#include "server/descriptor_passing.h"

namespace gleaner::cli {
namespace {

using nlohmann::json;

volatile std::sig_atomic_t g_interrupted = 0;
void OnInterrupt(int) { g_interrupted = 1; }

bool Ended(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

std::string JobPath(int64_t id, const std::string& rest = "") {
  return "/v1/jobs/" + std::to_string(id) + rest;
}

// The job as the API has it now.
core::Result<json> FetchJob(const net::Endpoint& api, const std::string& token, int64_t id) {
  GLEANER_ASSIGN_OR_RETURN(const auto answer, net::HttpCall(api, "GET", JobPath(id), "", token));
  const json doc = core::ParseUntrustedJson<json>(answer.second);
  if (answer.first >= 400 || !doc.is_object() || !doc.contains("state")) {
    return core::Unavailable("job " + std::to_string(id) + ": " + answer.second.substr(0, 300));
  }
  return doc;
}

// The API's error message in an answer's body, or the body.
std::string ErrorIn(const std::string& body) {
  const json doc = core::ParseUntrustedJson<json>(body);
  if (doc.is_object() && doc.contains("error") && doc["error"].is_object()) {
    return doc["error"].value("message", body);
  }
  return body;
}

// How a command ends for a job that ended: its exit code, as srun's; what
// else ended it is said on `err`.
int ExitFor(const json& job, std::ostream& err) {
  const int64_t id = job.value("id", int64_t{0});
  const std::string state = job.value("state", "");
  if (job.contains("exit_code") && job["exit_code"].is_number_integer()) {
    const int code = job["exit_code"].get<int>();
    if (state == "cancelled")
      err << "gleaner: job " << id << " " << job.value("reason", "") << "\n";
    return code;
  }
  err << "gleaner: job " << id << " " << state << ": " << job.value("reason", "") << "\n";
  return kExitFailure;
}

// Submits `spec` and waits, saying on `err` why it waits, until `started`
// (asked with the job each time it runs or has ended) says the wait is
// over: the job then, or the exit code to leave with. ^C, or the end of
// this terminal, cancels the job meanwhile.
using Started = std::function<core::Result<bool>(const json& job)>;
std::variant<json, int> SubmitAndAwait(const net::Endpoint& api, const std::string& token,
                                       const sched::JobSpec& spec, const Started& started,
                                       std::ostream& err) {
  auto submitted = SubmitToApi(api, token, spec);
  if (!submitted.ok()) return Fail(err, submitted.status());
  const int64_t id = (*submitted)["id"].get<int64_t>();
  g_interrupted = 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, OnInterrupt);
  struct RestoreSignals {
    ~RestoreSignals() {
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
    }
  } restore;
  std::string said;
  for (;;) {
    if (g_interrupted) {
      net::HttpCall(api, "POST", JobPath(id, "/cancel"), "", token).status().IgnoreError();
      err << "gleaner: job " << id << " cancelled\n";
      return 128 + SIGINT;
    }
    auto job = FetchJob(api, token, id);
    if (!job.ok()) return Fail(err, job.status());
    const std::string state = job->value("state", "");
    if (state == "running" || state == "vacating" || Ended(state)) {
      auto done = started(*job);
      if (!done.ok()) return Fail(err, done.status());
      if (*done) return *std::move(job);
      if (Ended(state)) return ExitFor(*job, err);
    } else if (const std::string line = state + ": " + job->value("reason", ""); line != said) {
      err << "gleaner: job " << id << " " << (said.empty() ? "submitted; " : "") << line << "\n";
      said = line;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// The daemon's Unix socket, which sessions need; else why not.
core::Result<net::Endpoint> LocalApi(const JobOptions& o, const std::string& command) {
  GLEANER_ASSIGN_OR_RETURN(net::Endpoint api,
                           cli::RunningApi({o.server, o.token, o.data_dir, o.tls}));
  if (api.unix_path.empty()) {
    return core::InvalidArgument("`gleaner " + command +
                                 "` talks to the gleaner up of this host through its Unix "
                                 "socket: run it there, without --server");
  }
  return api;
}

std::string GpusOf(const json& job) {
  std::string gpus;
  if (job.contains("gpus") && job["gpus"].is_array()) {
    for (const json& g : job["gpus"]) {
      gpus += (gpus.empty() ? "" : ", ") + (g.is_string() ? g.get<std::string>() : g.dump());
    }
  }
  return gpus;
}

}  // namespace

int RunSession(const JobOptions& o, std::ostream& err) {
  if (o.command.empty()) {
    err << "gleaner: give the command after --: gleaner run --gpus 1 --pty -- bash\n";
    return kExitUsage;
  }
  auto api = LocalApi(o, "run");
  if (!api.ok()) return Fail(err, api.status());
  auto spec = SpecFromOptions(o);
  if (!spec.ok()) return Fail(err, spec.status());
  spec->pty = true;
  if (const char* term = std::getenv("TERM"); term != nullptr && *term != '\0') {
    spec->env.try_emplace("TERM", term);
  }
  // The session may start before this attaches: it starts at this size.
  if (winsize size{}; ioctl(STDIN_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0) {
    spec->env["GLEANER_PTY_ROWS"] = std::to_string(size.ws_row);
    spec->env["GLEANER_PTY_COLS"] = std::to_string(size.ws_col);
  }
  // Once it runs its terminal is offered; a session that already ended
  // still holds its output there until its client comes.
  int fd = -1;
  const auto attach = [&](const json& job) -> core::Result<bool> {
    const int64_t id = job.value("id", int64_t{0});
    GLEANER_ASSIGN_OR_RETURN(
        const server::AnswerWithDescriptor answer,
        server::CallForDescriptor(api->unix_path, "POST", JobPath(id, "/terminal")));
    fd = answer.fd;
    if (fd < 0 && answer.status != 404) return core::Unavailable(ErrorIn(answer.body));
    return fd >= 0;
  };
  auto waited = SubmitAndAwait(*api, o.token, *spec, attach, err);
  if (const int* code = std::get_if<int>(&waited)) return *code;
  const json& job = std::get<json>(waited);
  const int64_t id = job.value("id", int64_t{0});
  const std::string gpus = GpusOf(job);
  err << "gleaner: job " << id << " attached" << (gpus.empty() ? "" : " (GPUs " + gpus + ")")
      << "; it ends when its command does\n";
  const core::Status relayed = RelayTerminal(fd, STDIN_FILENO, STDOUT_FILENO);
  close(fd);
  if (!relayed.ok()) {
    err << "gleaner: job " << id << ": " << relayed.message() << "\n";
    return kExitFailure;
  }
  // The session's side is gone: its end is recorded at the daemon's next pass.
  for (int i = 0; i < 150; ++i) {
    auto now = FetchJob(*api, o.token, id);
    if (now.ok() && Ended(now->value("state", ""))) return ExitFor(*now, err);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  err << "gleaner: job " << id << " has not ended yet; see `gleaner show " << id << "`\n";
  return kExitFailure;
}

int RunNotebook(const JobOptions& o, std::ostream& out, std::ostream& err) {
  if (!o.command.empty()) {
    err << "gleaner: notebook runs Jupyter itself: give no command (use `gleaner submit` for "
           "another server)\n";
    return kExitUsage;
  }
  auto api = LocalApi(o, "notebook");
  if (!api.ok()) return Fail(err, api.status());
  JobOptions with = o;
  // Only this host's users can reach it, and only with its token.
  with.command = {"jupyter", "lab", "--no-browser", "--ip=127.0.0.1"};
  if (with.max_runtime_s <= 0) with.max_runtime_s = kNotebookHours * 3600.0;
  if (with.name.empty()) with.name = "notebook";
  auto spec = SpecFromOptions(with);
  if (!spec.ok()) return Fail(err, spec.status());
  auto waited = SubmitAndAwait(
      *api, o.token, *spec,
      [](const json& job) -> core::Result<bool> { return job.value("state", "") == "running"; },
      err);
  if (const int* code = std::get_if<int>(&waited)) return *code;
  const int64_t id = std::get<json>(waited).value("id", int64_t{0});
  // Jupyter says where it listens, with its token, on stderr.
  static const std::regex kUrl(R"(http://127\.0\.0\.1:[0-9]+/[^\s]*token=[0-9A-Za-z]+)");
  std::string said;
  uint64_t offset = 0;
  for (int i = 0; i < 600; ++i) {
    auto answer = net::HttpCall(
        *api, "GET", JobPath(id, "/logs?stream=err&offset=") + std::to_string(offset), "", o.token);
    if (!answer.ok()) return Fail(err, answer.status());
    const json doc = core::ParseUntrustedJson<json>(answer->second);
    if (answer->first >= 400 || !doc.is_object()) {
      return Fail(err, core::Unavailable(ErrorIn(answer->second)));
    }
    said += doc.value("data", "");
    offset = doc.value("offset", offset);
    std::smatch url;
    if (std::regex_search(said, url, kUrl)) {
      const json job = FetchJob(*api, o.token, id).value_or(json::object());
      out << url.str() << "\n";
      err << "gleaner: job " << id << " runs Jupyter"
          << (GpusOf(job).empty() ? "" : " on " + GpusOf(job)) << " until `gleaner cancel " << id
          << "` or its time limit; from another machine: ssh -L PORT:127.0.0.1:PORT this host\n";
      return kExitOk;
    }
    if (Ended(doc.value("state", ""))) {
      err << said;
      return ExitFor(FetchJob(*api, o.token, id).value_or(json{{"id", id}}), err);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  err << "gleaner: job " << id
      << " runs, but Jupyter has not said where yet: see `gleaner logs --err " << id << "`\n";
  return kExitFailure;
}

}  // namespace gleaner::cli
