#include "cli/session_command.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <thread>

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

// The job as the API has it now.
core::Result<json> FetchJob(const server::Endpoint& api, const std::string& token, int64_t id) {
  GLEANER_ASSIGN_OR_RETURN(
      const auto answer, server::HttpCall(api, "GET", "/v1/jobs/" + std::to_string(id), "", token));
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

// How `gleaner run` ends for a job that ended: its exit code, as srun's;
// what else ended it is said on `err`.
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

}  // namespace

int RunSession(const JobOptions& o, std::ostream& err) {
  if (o.command.empty()) {
    err << "gleaner: give the command after --: gleaner run --gpus 1 --pty -- bash\n";
    return kExitUsage;
  }
  auto api = cli::RunningApi({o.server, o.token, o.data_dir, o.tls});
  if (!api.ok()) return Fail(err, api.status());
  if (api->unix_path.empty()) {
    return Fail(err, core::InvalidArgument(
                         "a session's terminal is handed over the local gleaner's Unix socket: "
                         "run `gleaner run` on the host of a `gleaner up`, without --server"));
  }
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
  auto submitted = SubmitToApi(*api, o.token, *spec);
  if (!submitted.ok()) return Fail(err, submitted.status());
  const int64_t id = (*submitted)["id"].get<int64_t>();
  const std::string job = "job " + std::to_string(id);

  // Until it runs, ^C (or the end of this terminal) cancels it.
  g_interrupted = 0;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, OnInterrupt);
  const auto restore_signals = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
  };
  std::string said;
  json now;
  int fd = -1;
  for (;;) {
    if (g_interrupted) {
      restore_signals();
      server::HttpCall(*api, "POST", "/v1/jobs/" + std::to_string(id) + "/cancel", "", o.token)
          .status()
          .IgnoreError();
      err << "gleaner: " << job << " cancelled\n";
      return 128 + SIGINT;
    }
    auto fetched = FetchJob(*api, o.token, id);
    if (!fetched.ok()) {
      restore_signals();
      return Fail(err, fetched.status());
    }
    now = std::move(fetched).value();
    const std::string state = now.value("state", "");
    if (state == "running" || state == "vacating" || Ended(state)) {
      // Started (a session's output waits in its terminal, so one that
      // already ended still shows it); its terminal is offered right after.
      auto answer = server::CallForDescriptor(api->unix_path, "POST",
                                              "/v1/jobs/" + std::to_string(id) + "/terminal");
      if (!answer.ok()) {
        restore_signals();
        return Fail(err, answer.status());
      }
      if (answer->fd >= 0) {
        fd = answer->fd;
        break;
      }
      if (Ended(state)) {
        restore_signals();
        return ExitFor(now, err);
      }
      if (answer->status != 404) {
        restore_signals();
        return Fail(err, core::Unavailable(ErrorIn(answer->body)));
      }
    } else {
      const std::string line = state + ": " + now.value("reason", "");
      if (line != said) {
        err << "gleaner: " << job << " " << (said.empty() ? "submitted; " : "") << line << "\n";
        said = line;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  restore_signals();
  std::string gpus;
  if (now.contains("gpus") && now["gpus"].is_array()) {
    for (const json& g : now["gpus"]) {
      gpus += (gpus.empty() ? "" : ", ") + (g.is_string() ? g.get<std::string>() : g.dump());
    }
  }
  err << "gleaner: " << job << " attached" << (gpus.empty() ? "" : " (GPUs " + gpus + ")")
      << "; it ends when its command does\n";
  const core::Status relayed = RelayTerminal(fd, STDIN_FILENO, STDOUT_FILENO);
  close(fd);
  if (!relayed.ok()) err << "gleaner: " << relayed.message() << "\n";
  // The session's side is gone: its end is recorded at the daemon's next pass.
  for (int i = 0; i < 150; ++i) {
    auto fetched = FetchJob(*api, o.token, id);
    if (fetched.ok() && Ended(fetched->value("state", ""))) return ExitFor(*fetched, err);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  err << "gleaner: " << job << " has not ended yet; see `gleaner show " << id << "`\n";
  return kExitFailure;
}

}  // namespace gleaner::cli
