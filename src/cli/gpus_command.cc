#include "cli/gpus_command.h"

#include <chrono>
#include <memory>
#include <ostream>
#include <thread>

#include "cli/exit_codes.h"
#include "cli/gpus_json.h"
#include "cli/gpus_table.h"
#include "cli/host_view.h"
#include "gpu/fake_backend.h"
#include "gpu/nvml/nvml_backend.h"

namespace gleaner::cli {

CLI::App* AddGpusCommand(CLI::App& app, GpusOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "gpus", "Show every GPU on this host and every process on it, like nvidia-smi");
  cmd->add_flag("--json", options.json,
                "Print the gleaner.gpus/v1 JSON document (docs/gpus-json.md); with --watch, one "
                "document per line");
  cmd->add_flag("--topology", options.topology,
                "Also show how each pair of GPUs is connected (always in --json)");
  cmd->add_option("--watch", options.watch_s, "Refresh every SECONDS (default 2) until interrupted")
      ->expected(0, 1)
      ->default_str("2")
      ->check(CLI::Range(0.1, 3600.0))
      ->type_name("SECONDS");
  cmd->add_option("--fake", options.fake,
                  "Use simulated GPUs from a scenario: a built-in name (demo) or a JSON file")
      ->type_name("SCENARIO");
  cmd->add_option("--nvml-library", options.nvml_library, "The NVML library to load")
      ->capture_default_str();
  return cmd;
}

namespace {

struct Source {
  std::unique_ptr<gpu::GpuBackend> backend;
  std::unique_ptr<agent::ProcessInspector> inspector;  // set for scenarios
};

int OpenSource(const GpusOptions& options, const GpusEnv& env, Source* source) {
  if (options.fake.empty()) {
    auto nvml = gpu::NvmlBackend::Create(options.nvml_library);
    if (!nvml.ok()) {
      env.err << "gleaner: " << nvml.status().message() << "\n";
      return kExitNoDriver;
    }
    source->backend = std::move(nvml).value();
    return kExitOk;
  }
  auto scenario = gpu::LoadScenario(options.fake);
  if (!scenario.ok()) {
    env.err << "gleaner: " << scenario.status().message() << "\n";
    return kExitBadInput;
  }
  source->inspector = std::make_unique<agent::ScenarioProcessInspector>(*scenario, env.inspector);
  auto fake = gpu::FakeBackend::Create(std::move(scenario).value(), env.clock);
  if (!fake.ok()) {
    env.err << "gleaner: " << fake.status().message() << "\n";
    return kExitNoDriver;
  }
  source->backend = std::move(fake).value();
  return kExitOk;
}

}  // namespace

int RunGpus(const GpusOptions& options, const GpusEnv& env) {
  Source source;
  if (int rc = OpenSource(options, env, &source); rc != kExitOk) return rc;
  const agent::ProcessInspector& inspector = source.inspector ? *source.inspector : env.inspector;
  const bool with_topology = options.json || options.topology;
  std::vector<gpu::GpuLink> topology;  // does not change while we run: read once
  for (bool first = true;; first = false) {
    auto view = ReadHost(*source.backend, inspector, env.clock.Now(), with_topology && first);
    if (!view.ok()) {
      env.err << "gleaner: reading GPUs failed: " << view.status().message() << "\n";
      return kExitFailure;
    }
    if (first) {
      topology = view->topology;
    } else {
      view->topology = topology;
    }
    if (options.json) {
      // Command lines from /proc need not be UTF-8: replace what is not.
      const nlohmann::json doc = GpusToJson(*view);
      env.out << doc.dump(options.watch_s ? -1 : 2, ' ', false,
                          nlohmann::json::error_handler_t::replace)
              << "\n";
    } else {
      if (options.watch_s) env.out << "\033[H\033[2J";  // clear the terminal
      env.out << GpusToTable(*view);
    }
    env.out.flush();
    if (!options.watch_s) return kExitOk;
    std::this_thread::sleep_for(std::chrono::duration<double>(*options.watch_s));
  }
}

}  // namespace gleaner::cli
