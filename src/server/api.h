#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/mutex.h"
#include "core/terminal_handoff.h"
#include "observe/holder_ask.h"
#include "server/caller.h"
#include "server/cost_api.h"
#include "server/history_api.h"
#include "server/http_server.h"
#include "server/job_api.h"
#include "server/policy_api.h"
#include "server/token_api.h"

namespace gleaner::server {

struct ApiOptions {
  sched::JobLimits limits;
  SubmitLimits submit_limits;  // [limits] in gleaner.toml
  std::string log_dir;         // the jobs' <id>.out and <id>.err
  std::function<std::string(uint32_t)> user_name;
  std::function<std::optional<uint32_t>(const std::string&)> uid_of;
  // The latest pass over the GPUs as a gleaner.gpus/v1 document; null
  // before the first.
  std::function<nlohmann::json()> gpus;
  // The Prometheus text exposition for GET /metrics, given the jobs that
  // have not ended by state (`dcgm`: with dcgm-exporter's names too);
  // null: no metrics.
  std::function<std::string(const std::map<std::string, int64_t>& jobs, bool dcgm)> metrics;
  // History and prices for /v1/cost, /v1/history and /v1/profiles;
  // without a store, those are 503.
  store::ObservationStore* observations = nullptr;
  CostApiOptions cost;
  // Over TCP, a request without a token may read what the dashboard shows
  // (AnonymousMayRead); [ui] anonymous_read in gleaner.toml.
  bool anonymous_read = false;
  // GET /v1/gpus shows others' processes by their program's name only
  // (HideOthersCommands); root sees every command. [ui]
  // hide_others_commands, by default as anonymous_read.
  bool hide_others_commands = false;
  // Token lifetime, and whether root may hold one ([api] in gleaner.toml).
  TokenPolicy tokens;
  // Called once a submit, cancel, hold or release is durable, so that a
  // daemon that schedules acts on it now rather than at its next pass.
  std::function<void()> queue_changed;
  // A coordinator's: jobs' logs are on the hosts that ran them.
  RemoteLogs remote_logs;
  // What each submit must satisfy (its project, its class's rules);
  // null: a well-formed spec is enough.
  std::shared_ptr<const SubmitPolicy> submit_policy;
  // Applies policy versions (POST /v1/policy); null: none are kept here.
  // It must outlive the API.
  PolicyControl* policy_control = nullptr;
  // Hears of jobs that wait for an approver, and of the decisions (the
  // alert webhook's); empty: the log and the API only.
  NotifyApproval notify_approval;
  // POST /v1/gpus/GPU/keep, /unpark, /give-up and /kill (`gleaner keep`,
  // `gleaner unpark [--give-up|--kill]`): asks this host's parker (or the
  // GPU's host); null where this daemon parks nothing.
  std::function<core::Status(const std::string& gpu, observe::HolderAsk ask, const Caller& caller)>
      parking;
  // POST /v1/hosts/NAME/forget and /accept (`gleaner host forget|accept`,
  // root only): a coordinator forgets a host's GPUs
  // (cluster::Coordinator::ForgetHost), or accepts those it reported after
  // its first join (AcceptHostGpus); how many. Unset where there is no
  // cluster.
  std::function<core::Result<int64_t>(const std::string& host, bool accept)> host_gpus;
  // Interactive sessions' terminals, which POST /v1/jobs/ID/terminal hands
  // their owners (`gleaner run --pty`); null where this daemon runs none
  // (a coordinator: its jobs run on other hosts), and then sessions are
  // refused at submit.
  std::shared_ptr<core::TerminalHandoff> terminals;
};

// gleaner's HTTP API (docs/api.md): says who the caller is, then routes.
// On the Unix socket the kernel names the caller; over TCP a bearer token
// must, or the answer is 401 (unless anonymous_read allows the request).
// Routes: /v1/jobs (JobApi), /v1/tokens and /v1/agent-tokens (TokenApi), /v1/cost (CostApi),
// /v1/history and /v1/profiles (HistoryApi), GET /v1/gpus, GET
// /v1/whoami, and GET /metrics for Prometheus (docs/metrics.md); / and
// /ui/ serve the dashboard's files to anyone (docs/ui.md). The store and
// clock must outlive it; thread-safe (one store, guarded).
class Api {
 public:
  Api(store::Store& store, const core::Clock& clock, ApiOptions options)
      : options_(std::move(options)),
        jobs_store_(store),
        submit_policy_(options_.submit_policy),
        jobs_(store, store_mu_, clock, options_.limits, options_.submit_limits, options_.log_dir,
              options_.queue_changed, options_.remote_logs, &submit_policy_,
              options_.notify_approval, options_.terminals != nullptr),
        tokens_(store, store_mu_, clock, options_.uid_of, options_.tokens),
        policy_(store, store_mu_, options_.policy_control) {
    if (options_.observations != nullptr) {
      cost_.emplace(*options_.observations, store_mu_, clock, std::move(options_.cost));
      history_.emplace(*options_.observations, store_mu_, clock);
    }
  }

  HttpResponse Handle(const HttpRequest& request, const Peer& peer);

  // A new policy version's rules for submits and approvals, from the next
  // request on.
  void SetSubmitPolicy(std::shared_ptr<const SubmitPolicy> policy) {
    submit_policy_.Set(std::move(policy));
  }

 private:
  core::Result<Caller> Identify(const HttpRequest& request, const Peer& peer);
  HttpResponse HostGpus(const HttpRequest& request, const Caller& caller, const std::string& host,
                        bool accept);
  HttpResponse Parking(const HttpRequest& request, const Caller& caller, const std::string& gpu,
                       observe::HolderAsk ask);
  // POST /v1/jobs/ID/terminal: the session's terminal, passed once to its
  // owner over the Unix socket.
  HttpResponse Terminal(const HttpRequest& request, const Peer& peer, const std::string& job);

  core::Mutex store_mu_;
  ApiOptions options_;
  store::JobStore& jobs_store_ GLEANER_GUARDED_BY(store_mu_);
  SubmitPolicySlot submit_policy_;
  JobApi jobs_;
  TokenApi tokens_;
  PolicyApi policy_;
  std::optional<CostApi> cost_;
  std::optional<HistoryApi> history_;
};

}  // namespace gleaner::server
