// `gleaner agent`: one per GPU host. It samples and judges the host's GPUs
// as `gleaner up` does, keeps the host's own history, and runs what the
// leading coordinator assigns.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>

#include "agent/executor.h"
#include "agent/holder_parker.h"
#include "agent/host_resources.h"
#include "agent/minute_tee.h"
#include "agent/node_agent.h"
#include "agent/sampler.h"
#include "cli/api_client.h"
#include "cli/cluster_commands.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "cli/gpu_source.h"
#include "cluster/agent_credentials.h"
#include "config/catalog_files.h"
#include "config/config_file.h"
#include "core/format.h"
#include "core/host_name.h"
#include "core/json_depth.h"
#include "core/private_file.h"
#include "daemon/daemon_start.h"
#include "daemon/host_setup.h"
#include "daemon/host_watch.h"
#include "daemon/secrets.h"
#include "daemon/slurm_source.h"
#include "observe/verdict_json.h"
#include "server/http_client.h"
#include "server/http_server.h"
#include "server/routing.h"
#include "server/socket_address.h"
#include "store/sqlite_store.h"

namespace gleaner::cli {

namespace {

// Short enough that a dead coordinator costs a pass, not the owner's time.
constexpr core::Duration kReportTimeout = core::Seconds(2);

core::Result<std::vector<server::Endpoint>> ParseServers(const std::string& list,
                                                         const net::TlsFiles& tls) {
  std::vector<server::Endpoint> out;
  std::stringstream in(list);
  for (std::string url; std::getline(in, url, ',');) {
    if (url.empty()) continue;
    GLEANER_ASSIGN_OR_RETURN(server::Endpoint e, server::ParseServerUrl(url));
    GLEANER_RETURN_IF_ERROR(UseClientTls(tls, &e));
    out.push_back(std::move(e));
  }
  if (out.empty()) {
    return core::InvalidArgument(
        "--server: give the coordinators' URLs, http(s)://HOST:PORT[,...]");
  }
  return out;
}

// The coordinators, tried in turn: the last one that answered first. A
// standby answers 503 and the next is tried. Each keeps its connection
// open between calls.
class Coordinators {
 public:
  explicit Coordinators(const std::vector<server::Endpoint>& endpoints) {
    for (const server::Endpoint& e : endpoints) {
      clients_.push_back(std::make_unique<server::HttpClient>(e));
    }
  }

  // POSTs `body` to `target` on each coordinator in turn until one answers
  // 200; the answer's JSON. Any other answer is kept as the error; a 401 or
  // a 404 ends the round (another coordinator would say the same).
  core::Result<nlohmann::json> Post(const std::string& target, const nlohmann::json& body,
                                    const std::string& token,
                                    core::Duration timeout = kReportTimeout) {
    core::Status last = core::Unavailable("no coordinator");
    // What a host reports may hold bytes that are not UTF-8 (a process's
    // command line): replaced, never a throw.
    const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    for (size_t tried = 0; tried < clients_.size(); ++tried) {
      server::HttpClient& client = *clients_[current_];
      const std::string where = client.endpoint().ToString();
      auto answer = client.Call("POST", target, text, token, timeout);
      if (answer.ok() && answer->first == 200) {
        nlohmann::json j = core::ParseUntrustedJson<nlohmann::json>(answer->second);
        if (!j.is_discarded()) return j;
        last = core::Unavailable(where + " answered something that is not JSON");
      } else if (answer.ok()) {
        const nlohmann::json j = core::ParseUntrustedJson<nlohmann::json>(answer->second);
        const std::string why =
            j.is_object() && j.contains("error") ? j["error"].dump() : answer->second;
        const std::string said = where + ": " + why;
        if (answer->first == 401) return core::Unauthenticated(said);
        if (answer->first == 404) return core::NotFound(said);
        last = core::Unavailable(where + " answered " + std::to_string(answer->first) + ": " + why);
      } else {
        last = answer.status();
      }
      current_ = (current_ + 1) % clients_.size();
    }
    return last;
  }

  // Ends a call under way from another thread, and every later one.
  void Interrupt() {
    for (auto& c : clients_) c->Interrupt();
  }

 private:
  std::vector<std::unique_ptr<server::HttpClient>> clients_;
  size_t current_ = 0;
};

// The agent's long poll (/v1/agents/wait): a thread that asks the
// coordinator to answer once it has orders for this host, and then wakes
// the sampler, so a start is heard of at once, not at the next pass.
class OrderWaiter {
 public:
  OrderWaiter(const std::vector<server::Endpoint>& endpoints, agent::Sampler& sampler,
              const cluster::Log& log)
      : coordinators_(endpoints), sampler_(sampler), log_(log) {}
  ~OrderWaiter() { Stop(); }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    stop_ = true;
    coordinators_.Interrupt();
    if (thread_.joinable()) thread_.join();
  }
  // From each reply to a report: its credential, and the orders it brought.
  void Heard(const std::string& credential, uint64_t orders) {
    std::lock_guard lock(mu_);
    credential_ = credential;
    seen_ = std::max(seen_, orders);
  }

 private:
  void Run() {
    while (!stop_) {
      std::string credential;
      uint64_t seen;
      {
        std::lock_guard lock(mu_);
        credential = credential_;
        seen = seen_;
      }
      const auto asked = std::chrono::steady_clock::now();
      auto answer =
          coordinators_.Post("/v1/agents/wait", {{"orders", seen}}, credential, kWaitTimeout);
      if (stop_) return;
      if (answer.ok()) {
        const uint64_t orders = answer->value("orders", uint64_t{0});
        if (orders <= seen && std::chrono::steady_clock::now() - asked < std::chrono::seconds(1)) {
          Pause();  // nothing new, yet answered at once: never a busy loop
        }
        if (orders > seen) {
          {
            // Not asked again for the same orders while the pass it wakes
            // reports.
            std::lock_guard lock(mu_);
            seen_ = std::max(seen_, orders);
          }
          sampler_.Wake();
        }
        continue;
      }
      if (answer.status().code() == core::StatusCode::kNotFound) {
        log_(
            "the coordinator takes no long polls (an older gleaner): this agent hears of "
            "starts at its next report");
        return;
      }
      // A standby, a coordinator away, a credential being renewed: the
      // reports carry on meanwhile; try again shortly.
      Pause();
    }
  }

  void Pause() {
    for (int i = 0; i < 10 && !stop_; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Beyond the coordinator's 25 s hold.
  static constexpr core::Duration kWaitTimeout = core::Seconds(35);
  Coordinators coordinators_;
  agent::Sampler& sampler_;
  const cluster::Log& log_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::string credential_;  // guarded by mu_
  uint64_t seen_ = 0;       // guarded by mu_
  std::thread thread_;
};

// Spends a join token; the credential is kept in DATA_DIR/agent.credential
// (mode 600, never through a link).
core::Result<std::string> Join(const std::string& data_dir, const std::string& name,
                               const std::string& token, Coordinators& coordinators,
                               const cluster::Log& log) {
  const std::string path = data_dir + "/agent.credential";
  GLEANER_ASSIGN_OR_RETURN(
      nlohmann::json joined,
      coordinators.Post("/v1/agents/join", {{"name", name}, {"join_token", token}}, ""));
  const std::string credential = joined.value("credential", "");
  if (!core::WritePrivateFile(path, credential).ok()) {
    return core::Unavailable("cannot keep the credential in " + path);
  }
  log("joined the cluster as " + name + "; credential kept in " + path);
  return credential;
}

// The credential kept from an earlier join, or a new one from the token
// in `token_file`, which is then `spent`.
core::Result<std::string> Credential(const std::string& data_dir, const std::string& name,
                                     const std::string& token_file, Coordinators& coordinators,
                                     const cluster::Log& log, std::string* spent) {
  std::istringstream in(core::ReadPrivateFile(data_dir + "/agent.credential").value_or(""));
  std::string kept;
  if (in >> kept && kept.starts_with("agent." + name + ".")) return kept;
  if (token_file.empty()) {
    return core::InvalidArgument(
        "this agent has not joined yet: on a coordinator host, root runs `gleaner agent-token "
        "create --host " +
        name + "`; put the token in a file only root can read and pass --join-token-file FILE");
  }
  GLEANER_ASSIGN_OR_RETURN(*spent, daemon::ReadJoinToken(token_file));
  return Join(data_dir, name, *spent, coordinators, log);
}

// How often an agent whose credential is refused may try a new join token
// from its file: a bad token must not flood the coordinators.
constexpr core::Duration kRejoinEvery = core::Seconds(30);

}  // namespace

CLI::App* AddAgentCommand(CLI::App& app, AgentOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "agent", "Lend this host's idle GPUs to a cluster's coordinators (docs/cluster.md)");
  cmd->add_option("--server", options.servers,
                  "The coordinators: http(s)://HOST:PORT, several comma-separated")
      ->required();
  AddClientTlsOptions(*cmd, options.tls, /*env=*/false);
  cmd->add_option("--join-token-file", options.join_token_file,
                  "A one-time join token from `gleaner agent-token create` (needed to join the "
                  "first time, and after an admin replaced this host)");
  // Agents once joined with the cluster's secret; say what replaced it.
  cmd->add_option("--join-secret-file", options.join_secret_file)->group("");
  cmd->add_option("--name", options.name, "This host's name in the cluster (default: hostname)");
  cmd->add_option("--rack", options.rack,
                  "The rack or leaf switch this host is under: a gang over several nodes "
                  "prefers nodes under one (docs/gangs.md)");
  cmd->add_option("--fake", options.fake, "Simulated GPUs from a scenario (demo, or a file)")
      ->type_name("SCENARIO");
  cmd->add_option("--nvml-library", options.nvml_library, "The NVML library to load")
      ->capture_default_str();
  cmd->add_option("--data-dir", options.data_dir,
                  "Where the agent keeps its credential, jobs and history");
  cmd->add_option("--config", options.config, "Config file (default: DATA_DIR/gleaner.toml)");
  cmd->add_option("--interval", options.interval_s, "Seconds between samples and reports")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--for", options.for_s, "Stop after this many seconds")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--metrics-listen", options.metrics_listen,
                  "Serve this host's /metrics (no token) on HOST:PORT, or none")
      ->capture_default_str()
      ->type_name("HOST:PORT");
  return cmd;
}

namespace {

// The agent's own HTTP endpoint: GET /metrics, for Prometheus, and nothing
// else. No token: like an exporter, it reveals readings, never jobs.
server::HttpServer::Handler MetricsOnly(agent::HostMetrics& metrics, agent::IdleCostPrices prices) {
  return [&metrics, prices](const server::HttpRequest& r, const server::Peer&) {
    std::string query;
    const std::vector<std::string> seg = server::Segments(r.path, &query);
    if (seg != std::vector<std::string>{"metrics"}) {
      return server::ErrorResponse(core::NotFound("an agent serves only GET /metrics"));
    }
    if (r.method != "GET") return server::WrongMethod(r);
    auto params = server::ParseQuery(query);
    if (!params.ok()) return server::ErrorResponse(params.status());
    const auto dcgm = params->find("dcgm");
    server::HttpResponse out{
        200, metrics.Render({}, prices, dcgm != params->end() && dcgm->second == "1")};
    out.content_type = "text/plain; version=0.0.4; charset=utf-8";
    return out;
  };
}

}  // namespace

int RunAgent(const AgentOptions& options, const core::Clock& clock,
             const agent::ProcessInspector& inspector, std::ostream& out, std::ostream& err) {
  if (!options.join_secret_file.empty()) {
    err << "gleaner: agents no longer hold the cluster's secret: keep it on the coordinators "
           "only; on a coordinator host, root runs `gleaner agent-token create --host NAME`, "
           "and the agent joins with --join-token-file\n";
    return kExitUsage;
  }
  const std::string name = options.name.empty() ? core::Hostname() : options.name;
  if (auto s = cluster::CheckAgentName(name); !s.ok()) {
    err << "gleaner: --name: " << s.message() << "\n";
    return kExitUsage;
  }
  if (!options.rack.empty()) {
    if (auto s = cluster::CheckAgentName(options.rack); !s.ok()) {
      err << "gleaner: --rack: only letters, digits, '-', '_' and '.', 1 to 128 of them\n";
      return kExitUsage;
    }
  }
  auto endpoints = ParseServers(options.servers, options.tls);
  if (!endpoints.ok()) {
    err << "gleaner: " << endpoints.status().message() << "\n";
    return kExitUsage;
  }
  int start_rc = kExitOk;
  std::optional<daemon::DaemonBase> base =
      StartDaemon(options.data_dir, options.config, options.interval_s, err, &start_rc);
  if (!base) return start_rc;
  if (core::Status s = daemon::CheckWatchdog(base->notifier, base->config.sample_interval);
      !s.ok()) {
    err << "gleaner: " << s.message() << "\n";
    return kExitBadInput;
  }
  const std::string& data_dir = base->data_dir;
  const config::GleanerConfig& config = base->config;
  std::mutex log_mu;
  const cluster::Log log = daemon::TimestampedLog(out, log_mu);
  Coordinators coordinators(*endpoints);
  std::string spent_token;  // a join token is tried once
  auto credential =
      Credential(data_dir, name, options.join_token_file, coordinators, log, &spent_token);
  if (!credential.ok()) {
    err << "gleaner: cannot join the cluster: " << credential.status().message() << "\n";
    return credential.status().code() == core::StatusCode::kUnavailable ? kExitFailure
                                                                        : kExitBadInput;
  }
  auto local = store::SqliteStore::Open(data_dir + "/gleaner.db");
  if (!local.ok()) {
    err << "gleaner: " << local.status().message() << "\n";
    return kExitFailure;
  }
  GpuSource source;
  // Simulated GPUs are this agent's own: several agents may play one scenario.
  if (int rc =
          OpenGpuSource(options.fake, options.nvml_library, clock, inspector, err, &source, name);
      rc != kExitOk) {
    return rc;
  }
  RememberGpuFaults(data_dir, clock, log, &source);
  const core::RealClock job_clock;  // exit times are wall-clock facts
  agent::Executor executor(job_clock);
  // Bridge mode: Slurm runs the jobs (and confines them); else this host does.
  const std::unique_ptr<agent::SlurmRunner> bridge = daemon::MakeBridgeRunner(config.slurm, job_clock);
  agent::JobRunner& runner = bridge ? static_cast<agent::JobRunner&>(*bridge) : executor;
  std::optional<agent::JobCgroups> job_cgroups;
  if (!bridge) job_cgroups = daemon::UseJobCgroups(data_dir, executor, log);
  agent::NodeAgentOptions agent_options;
  agent_options.log_dir = data_dir + "/logs";
  agent_options.state_path = data_dir + "/agent-jobs.json";
  agent_options.links = source.backend->Topology().value_or(std::vector<gpu::GpuLink>{});
  agent_options.rack = options.rack;
  agent_options.host = agent::HostResourcesForJobs(config.host);
  std::unique_ptr<OrderWaiter> waiter;  // set before the first pass
  agent::NodeAgent node(
      runner, job_clock, agent_options,
      [&, token = *credential, last_join = core::TimePoint{}, spent = spent_token](
          const cluster::AgentReport& report) mutable -> core::Result<cluster::AgentReply> {
        const nlohmann::json body = cluster::ReportToJson(report);
        auto reply = coordinators.Post("/v1/agents/report", body, token);
        // The credential was cut off (the secret rotated, or this host
        // replaced): join again if the token file holds a token not yet
        // tried.
        if (!reply.ok() && reply.status().code() == core::StatusCode::kUnauthenticated &&
            !options.join_token_file.empty() && job_clock.Now() - last_join > kRejoinEvery) {
          auto fresh_token = daemon::ReadJoinToken(options.join_token_file);
          if (fresh_token.ok() && *fresh_token != spent) {
            last_join = job_clock.Now();
            spent = *fresh_token;
            log("the coordinator refused this agent's credential (" + reply.status().message() +
                "); joining again with " + options.join_token_file);
            auto fresh = Join(data_dir, name, *fresh_token, coordinators, log);
            if (!fresh.ok()) return fresh.status();
            token = *fresh;
            reply = coordinators.Post("/v1/agents/report", body, token);
          }
        }
        if (!reply.ok()) return reply.status();
        auto decoded = cluster::ReplyFromJson(*reply);
        if (decoded.ok() && waiter != nullptr) waiter->Heard(token, decoded->orders);
        return decoded;
      });
  agent::MinuteTee history(**local, [&node](const std::vector<observe::MinuteRollup>& minutes) {
    node.AddMinutes(minutes);
  });
  agent::SamplerOptions sampler_options;
  sampler_options.interval = config.sample_interval;
  sampler_options.retention = config.retention;
  sampler_options.idle = config.idle;
  sampler_options.colocation = config.colocation;
  sampler_options.lend_allow = config.lend_allow;
  sampler_options.project_of_user = config.project_of_user;
  sampler_options.host = name;
  agent::Sampler sampler(*source.backend, *source.inspector, &history, clock, sampler_options);
  sampler.WatchLending([&node] { return node.LentGpus(); });
  sampler.Recall(std::max(config.idle.idle_after, config.idle.held_idle_after));
  daemon::HostWatch watch(
      {name, "agent", config.alert_rules, config.alert_webhook_url, config.idle.max_sample_gap},
      log);
  node.ReportTo(&watch.metrics());
  daemon::ResumeFromHistory(sampler, log);
  const std::string parked_path = data_dir + "/parked-holders.json";
  const std::unique_ptr<gpu::CudaCheckpoint> cuda =
      daemon::OpenCudaForParking(config.parking, config.cuda_library, parked_path, log);
  agent::HolderParker parker(cuda.get(), clock, {config.parking, parked_path});
  parker.ReportTo(&watch.metrics());
  parker.NotifyThrough(
      [&watch, &log](const std::vector<observe::AlertEvent>& e) { watch.Notify(e, log); });
  sampler.WatchParking([&parker] { return parker.Parkings(); });
  // `gleaner keep` and `unpark` come through the coordinator, which
  // checked who asked.
  node.OnHolderRequests(
      [&parker](const std::vector<cluster::HolderRequest>& asked, const cluster::Log& to) {
        for (const cluster::HolderRequest& r : asked) {
          const core::Status s = parker.Ask(r.ask, r.gpu.str(), "", true);
          to(std::string(observe::HolderAskName(r.ask)) + " " + r.gpu.str() + ": " +
             (s.ok() ? "done" : s.message()));
        }
      });
  std::unique_ptr<server::HttpServer> metrics_server;
  if (options.metrics_listen != "none") {
    auto host_port = server::ParseHostPort(options.metrics_listen);
    if (!host_port.ok()) {
      err << "gleaner: --metrics-listen: " << host_port.status().message() << "\n";
      return kExitUsage;
    }
    auto catalog = config::LoadCatalog(config.cost.catalog_files);
    if (!catalog.ok()) {
      err << "gleaner: " << catalog.status().message() << " ([cost] catalogs in "
          << base->config_path << ")\n";
      return kExitBadInput;
    }
    const agent::IdleCostPrices prices = daemon::IdleCostPricesOf(
        source.backend->Snapshot().value_or(std::vector<gpu::GpuSnapshot>{}), *catalog,
        config.cost);
    auto served = server::HttpServer::ServeTcp(host_port->first, host_port->second,
                                               MetricsOnly(watch.metrics(), prices));
    if (!served.ok()) {
      err << "gleaner: " << served.status().message() << " (choose another --metrics-listen)\n";
      return kExitFailure;
    }
    metrics_server = std::move(served).value();
    log("metrics on " + metrics_server->address() + "/metrics");
  }
  node.Recover(log);
  parker.Recover(log);
  log("agent " + name + " on " + source.backend->Driver().source + ", reporting every " +
      core::FormatDuration(config.sample_interval) + " to " + options.servers);
  waiter = std::make_unique<OrderWaiter>(*endpoints, sampler, log);
  waiter->Heard(*credential, 0);
  waiter->Start();
  {
    daemon::StopSignal stop(options.for_s);
    core::ServiceNotifier& notifier = base->notifier;
    notifier.Ready("agent " + name + " reporting to " + options.servers);
    sampler.Run(stop.flag(), [&](const agent::HostPass& pass, const core::Status& status) {
      notifier.Alive();
      if (!status.ok()) log("error: " + status.message());
      watch.Observe(pass, log);
      // Even a pass that read no GPU reaps, keeps the lease and reports.
      node.Act(pass, log);
      parker.Step(pass, node.LentGpus(), log);
    });
  }
  base->notifier.Stopping();
  waiter->Stop();
  // Jobs outlive the agent; their directory goes only when none is left.
  if (job_cgroups) job_cgroups->RemoveBase().IgnoreError();
  log("stopped");
  return kExitOk;
}

}  // namespace gleaner::cli
