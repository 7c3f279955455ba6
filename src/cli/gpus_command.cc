#include "cli/gpus_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <ostream>
#include <thread>

#include "agent/sampler.h"
#include "cli/api_client.h"
#include "cli/config_file.h"
#include "cli/exit_codes.h"
#include "cli/explain.h"
#include "cli/gpu_source.h"
#include "cli/gpus_json.h"
#include "cli/gpus_table.h"
#include "cli/host_view.h"
#include "store/sqlite_store.h"

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
  return cmd;
}

namespace {

// Verdicts a running `gleaner monitor` saved recently: they rest on
// history this one-off reading does not have.
std::map<core::GpuUuid, observe::Verdict> StoredVerdicts(const std::string& data_dir,
                                                         core::TimePoint now) {
  std::map<core::GpuUuid, observe::Verdict> out;
  const std::string path = DataDir(data_dir) + "/gleaner.db";
  if (!std::filesystem::exists(path)) return out;
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

}  // namespace

namespace {

// One line per GPU of a remote gleaner's /v1/gpus document.
std::string RemoteGpuTable(const nlohmann::json& doc) {
  std::string out = doc.value("host", "") + "  source " + doc.value("source", "") + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-4s %-26s %6s %20s  %-10s %s", "GPU", "NAME", "UTIL", "MEMORY",
                "STATE", "REASON");
  out += line;
  const auto gib = [](const nlohmann::json& v) {
    return v.is_number() ? v.get<double>() / (1ULL << 30) : 0.0;
  };
  for (const nlohmann::json& g : doc["gpus"]) {
    const nlohmann::json& v = g["verdict"];
    std::snprintf(line, sizeof line, "\n%-4d %-26s %5s%% %8.1f / %6.1f GiB  %-10s %s",
                  g["index"].get<int>(),
                  g["name"].is_string() ? g["name"].get<std::string>().c_str() : "?",
                  g["utilization_gpu_pct"].is_number()
                      ? std::to_string(g["utilization_gpu_pct"].get<int>()).c_str()
                      : "-",
                  gib(g["memory_used_bytes"]), gib(g["memory_total_bytes"]),
                  v.is_object() ? v["state"].get<std::string>().c_str() : "-",
                  v.is_object() ? v["evidence"]["reason"].get<std::string>().c_str() : "");
    out += line;
  }
  return out;
}

}  // namespace

int RunGpus(const GpusOptions& options, const GpusEnv& env) {
  if (!options.server.empty()) {
    auto api = FindApi({options.server, options.token, options.data_dir});
    if (!api.ok()) return Fail(env.err, api.status());
    return CallApi(**api, options.token, "GET", "/v1/gpus", "", options.json, RemoteGpuTable,
                   env.out, env.err);
  }
  GpuSource source;
  if (int rc = OpenGpuSource(options.fake, options.nvml_library, env.clock, env.inspector, env.err,
                             &source);
      rc != kExitOk) {
    return rc;
  }
  // The same thresholds as the monitor's, from DATA_DIR/gleaner.toml.
  auto config = LoadConfig(DataDir(options.data_dir) + "/gleaner.toml", false);
  if (!config.ok()) {
    env.err << "gleaner: " << config.status().message() << "\n";
    return kExitBadInput;
  }
  agent::SamplerOptions sampler_options;
  sampler_options.idle = config->idle;
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
    HostView view = BuildHostView(pass->at, source.backend->Driver(), std::move(pass->snapshots),
                                  *source.inspector, verdicts);
    view.topology = with_topology ? topology : std::vector<gpu::GpuLink>{};
    if (!options.explain.empty()) {
      if (options.watch_s) env.out << "\033[H\033[2J";
      if (int rc = Explain(view, options.explain, sampler.classifier().config(), env.out, env.err);
          rc != kExitOk) {
        return rc;
      }
    } else if (options.json) {
      // Command lines from /proc need not be UTF-8: replace what is not.
      const nlohmann::json doc = GpusToJson(view);
      env.out << doc.dump(options.watch_s ? -1 : 2, ' ', false,
                          nlohmann::json::error_handler_t::replace)
              << "\n";
    } else {
      if (options.watch_s) env.out << "\033[H\033[2J";  // clear the terminal
      env.out << GpusToTable(view);
    }
    env.out.flush();
    if (!options.watch_s) return kExitOk;
    std::this_thread::sleep_for(std::chrono::duration<double>(*options.watch_s));
  }
}

}  // namespace gleaner::cli
