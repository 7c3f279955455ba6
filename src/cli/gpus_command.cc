#include "cli/gpus_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>
#include <sstream>
#include <thread>

#include "agent/sampler.h"
#include "cli/api_client.h"
#include "cli/exit_codes.h"
#include "cli/explain.h"
#include "cli/gpu_source.h"
#include "config/config_file.h"
#include "config/data_dir.h"
#include "daemon/slurm_source.h"
#include "gpu/fault_memory.h"
#include "store/sqlite_store.h"
#include "views/gpus_json.h"
#include "views/gpus_table.h"
#include "views/host_view.h"

namespace gleaner::cli {

CLI::App* AddGpusCommand(CLI::App& app, GpusOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "gpus", "Show every GPU on this host, every process on it, and whether it is idle");
  cmd->add_flag("--json", options.json,
                "Print the gleaner.gpus/v1 JSON document (docs/gpus-json.md); with --watch, one "
                "document per line");
  cmd->add_flag("--topology", options.topology,
                "Also show how each pair of GPUs is connected (always in --json)");
  cmd->add_option(
         "--watch", options.watch_s,
         "Refresh every SECONDS (default 2) until interrupted, judging idleness as it goes")
      ->expected(0, 1)
      ->default_str("2")
      ->check(CLI::Range(0.1, 3600.0))
      ->type_name("SECONDS");
  cmd->add_option("--explain", options.explain,
                  "Explain one GPU's verdict in full (an index, a UUID or a UUID prefix)")
      ->type_name("GPU");
  cmd->add_option("--fake", options.fake,
                  "Use simulated GPUs from a scenario: a built-in name (demo) or a JSON file")
      ->type_name("SCENARIO");
  cmd->add_option("--nvml-library", options.nvml_library, "The NVML library to load")
      ->capture_default_str();
  cmd->add_option("--data-dir", options.data_dir,
                  "Where `gleaner monitor` keeps its verdicts (default: $GLEANER_DATA_DIR, "
                  "/var/lib/gleaner as root, ~/.local/share/gleaner otherwise)");
  cmd->add_option("--forget-fault", options.forget_fault,
                  "After resetting a GPU, forget the fatal Xid gleaner remembers for it (a UUID, "
                  "or all); restart gleaner for a running daemon to lend it again")
      ->type_name("UUID");
  return cmd;
}

namespace {

// Verdicts a running `gleaner monitor` saved recently: they rest on
// history this one-off reading does not have.
std::map<core::GpuUuid, observe::Verdict> StoredVerdicts(const std::string& data_dir,
                                                         core::TimePoint now) {
  std::map<core::GpuUuid, observe::Verdict> out;
  const std::string path = config::DataDir(data_dir) + "/gleaner.db";
  if (!config::InDataDir(path).value_or(false)) return out;
  auto store = store::SqliteStore::Open(path);
  if (!store.ok()) return out;
  auto verdicts = (*store)->LatestVerdicts();
  if (!verdicts.ok()) return out;
  for (observe::Verdict& v : *verdicts) {
    // A monitor saves each verdict at least once a minute.
    if (now - v.at <= core::Seconds(90)) out[v.uuid] = std::move(v);
  }
  return out;
}

// `gleaner gpus --forget-fault`: the operator has reset the GPU.
int ForgetFault(const GpusOptions& options, const GpusEnv& env) {
  const std::string path = daemon::GpuFaultFile(config::DataDir(options.data_dir));
  auto forgotten = gpu::ForgetFaults(path, options.forget_fault);
  if (!forgotten.ok()) {
    env.err << "gleaner: " << forgotten.status().message() << "\n";
    return forgotten.status().code() == core::StatusCode::kNotFound ? kExitFailure : kExitBadInput;
  }
  for (const gpu::RememberedFault& f : *forgotten) {
    env.out << "forgot Xid " << f.xid << " of " << f.uuid << "\n";
  }
  env.out << "a running gleaner keeps judging it faulty until it restarts (systemctl restart "
             "gleaner; running jobs are kept)\n";
  return kExitOk;
}

}  // namespace

namespace {

using nlohmann::json;

// The views in a gleaner's /v1/gpus document: one host's (gleaner.gpus/v1),
// or each host's of a coordinator (gleaner.cluster/v1, whose agents report
// fewer readings: those it lacks show as n/a).
core::Result<std::vector<views::HostView>> RemoteViews(const json& doc) {
  if (!doc.is_object() || doc.value("schema", "") != "gleaner.cluster/v1") {
    auto view = views::HostViewFromJson(doc);
    if (!view.ok()) return view.status();
    return std::vector<views::HostView>{std::move(view).value()};
  }
  std::vector<views::HostView> views;
  for (const json& host : doc.value("hosts", json::array())) {
    if (!host.is_object()) continue;
    const json one = {{"schema", "gleaner.gpus/v1"},
                      {"taken_at", doc.value("taken_at", "")},
                      {"host", host.value("host", "?")},
                      {"source", "agent, " + host.value("health", std::string("?"))},
                      {"gpus", host.value("gpus", json::array())}};
    auto view = views::HostViewFromJson(one);
    if (!view.ok()) return view.status();
    views.push_back(std::move(view).value());
  }
  return views;
}

// What `gpus` prints of a served document: the table, or with `explain`
// one GPU's reasoning (sets *rc on a GPU it cannot name).
std::string ShowRemote(const json& doc, const GpusOptions& options, std::ostream& err, int* rc) {
  auto views = RemoteViews(doc);
  if (!views.ok()) {
    *rc = kExitFailure;
    err << "gleaner: the daemon answered " << views.status().message() << "\n";
    return "";
  }
  if (views->empty()) return "no agent has reported yet";
  if (options.explain.empty()) {
    std::string out;
    for (const views::HostView& v : *views)
      out += (out.empty() ? "" : "\n") + views::GpusToTable(v);
    if (!out.empty() && out.back() == '\n') out.pop_back();  // the caller ends the line
    return out;
  }
  // One view of every host's GPUs: an index that names several asks for
  // the UUID.
  views::HostView all = views->front();
  for (size_t i = 1; i < views->size(); ++i) {
    for (views::GpuView& g : (*views)[i].gpus) all.gpus.push_back(std::move(g));
  }
  // The thresholds this host's config sets, where it can be read.
  auto config = config::LoadCommandConfig(config::DataDir(options.data_dir), "");
  std::ostringstream out;
  *rc = Explain(all, options.explain, config.ok() ? config->idle : observe::IdleConfig(), out, err);
  std::string text = out.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

int RunGpus(const GpusOptions& options, const GpusEnv& env) {
  if (!options.forget_fault.empty()) return ForgetFault(options, env);
  // A remote gleaner (--server), or the one serving the data directory:
  // its view has the history a one-off reading lacks, and works where this
  // process could not open the GPUs (a daemon on simulated ones). An
  // explicit --fake, --nvml-library or --topology reads here.
  const bool local_only = !options.fake.empty() ||
                          options.nvml_library != GpusOptions().nvml_library || options.topology;
  if (!options.server.empty() || !local_only) {
    auto api = FindApi({options.server, options.token, options.data_dir, options.tls});
    if (!api.ok()) return Fail(env.err, api.status());
    if (*api) {
      for (;;) {
        if (options.watch_s && !options.json) env.out << "\033[H\033[2J";  // clear the terminal
        int shown = kExitOk;
        const int rc = CallApi(
            **api, options.token, "GET", "/v1/gpus", "", false,
            [&](const json& doc) {
              return options.json ? doc.dump(options.watch_s ? -1 : 2, ' ', false,
                                             json::error_handler_t::replace)
                                  : ShowRemote(doc, options, env.err, &shown);
            },
            env.out, env.err);
        env.out.flush();
        if (rc != kExitOk) return rc;
        if (shown != kExitOk || !options.watch_s) return shown;
        std::this_thread::sleep_for(std::chrono::duration<double>(*options.watch_s));
      }
    }
  }
  GpuSource source;
  if (int rc = OpenGpuSource(options.fake, options.nvml_library, env.clock, env.inspector, env.err,
                             &source);
      rc != kExitOk) {
    return rc;
  }
  // The faults a daemon remembers, where this user may read them: this
  // reading alone hears no Xid raised before it started.
  const std::string data_dir = config::DataDir(options.data_dir);
  if (config::InDataDir(daemon::GpuFaultFile(data_dir)).value_or(false)) {
    daemon::RememberGpuFaults(
        data_dir, env.clock,
        [&](const std::string& line) { env.err << "gleaner: " << line << "\n"; }, &source);
  }
  // The same thresholds as the monitor's, from DATA_DIR/gleaner.toml.
  auto config = config::LoadCommandConfig(data_dir, "");
  if (!config.ok()) {
    env.err << "gleaner: " << config.status().message() << "\n";
    return kExitBadInput;
  }
  agent::SamplerOptions sampler_options;
  sampler_options.idle = config->idle;
  sampler_options.colocation = config->colocation;
  if (options.watch_s) {
    sampler_options.interval = core::Duration(static_cast<int64_t>(*options.watch_s * 1e6));
    sampler_options.idle.max_sample_gap =
        std::max(sampler_options.idle.max_sample_gap, 3 * sampler_options.interval);
  }
  agent::Sampler sampler(*source.backend, *source.inspector, nullptr, env.clock, sampler_options);
  const bool with_topology = options.json || options.topology;
  std::vector<gpu::GpuLink> topology;  // does not change while we run: read once
  for (bool first = true;; first = false) {
    auto pass = sampler.SampleOnce();
    if (!pass.ok()) {
      env.err << "gleaner: reading GPUs failed: " << pass.status().message() << "\n";
      return kExitFailure;
    }
    std::map<core::GpuUuid, observe::Verdict> verdicts;
    for (const observe::Verdict& v : pass->verdicts) verdicts[v.uuid] = v;
    if (!options.watch_s) {
      // One reading has no history: prefer what a running monitor knows.
      for (auto& [uuid, v] : StoredVerdicts(options.data_dir, pass->at)) verdicts[uuid] = v;
    }
    if (first && with_topology) {
      auto links = source.backend->Topology();
      if (links.ok()) topology = std::move(links).value();
    }
    views::HostView view =
        views::BuildHostView(pass->at, source.backend->Driver(), std::move(pass->snapshots),
                             *source.inspector, verdicts);
    view.topology = with_topology ? topology : std::vector<gpu::GpuLink>{};
    if (config->slurm.enabled) {
      auto jobs = daemon::FetchSlurmJobs(config->slurm);
      views::AttachSlurmJobs(view, daemon::SlurmNodeName(config->slurm),
                             jobs.ok() ? jobs->jobs : std::vector<slurm::SlurmJob>{},
                             jobs.ok() ? std::optional(pass->at) : std::nullopt,
                             jobs.ok() ? "" : jobs.status().message());
    }
    if (!options.explain.empty()) {
      if (options.watch_s) env.out << "\033[H\033[2J";
      if (int rc = Explain(view, options.explain, sampler.classifier().config(), env.out, env.err);
          rc != kExitOk) {
        return rc;
      }
    } else if (options.json) {
      // Command lines from /proc need not be UTF-8: replace what is not.
      const nlohmann::json doc = views::GpusToJson(view);
      env.out << doc.dump(options.watch_s ? -1 : 2, ' ', false,
                          nlohmann::json::error_handler_t::replace)
              << "\n";
    } else {
      if (options.watch_s) env.out << "\033[H\033[2J";  // clear the terminal
      env.out << views::GpusToTable(view);
    }
    env.out.flush();
    if (!options.watch_s) return kExitOk;
    std::this_thread::sleep_for(std::chrono::duration<double>(*options.watch_s));
  }
}

}  // namespace gleaner::cli
