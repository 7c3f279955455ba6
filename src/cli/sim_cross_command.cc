#include "cli/sim_cross_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/exit_codes.h"
#include "cli/run_outputs.h"
#include "sim/cross_cluster.h"
#include "sim/helios_trace.h"

namespace gleaner::cli {
namespace {}  // namespace

int RunSimCross(const SimCrossOptions& o, std::ostream& out, std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  sim::HeliosReadOptions read_options;
  read_options.skip_bad_rows = o.skip_bad_rows;
  std::error_code dir_ec;
  if (!std::filesystem::is_directory(o.helios_dir, dir_ec)) {
    err << "gleaner: --helios " << o.helios_dir
        << " is not a directory; give the folder that holds the Helios vc*.csv files (e.g. "
           "../shared/traces/helios-earth)\n";
    return kExitUsage;
  }
  auto vcs = sim::ReadHeliosDir(o.helios_dir, read_options);
  if (!vcs.ok()) {
    err << "gleaner: " << vcs.status().message() << "\n";
    return kExitBadInput;
  }
  int64_t skipped = 0;
  for (const sim::HeliosVc& vc : *vcs) {
    for (const std::string& m : vc.skipped_messages) err << "gleaner: skipped " << m << "\n";
    if (vc.cleaning.bad_rows_skipped > static_cast<int64_t>(vc.skipped_messages.size())) {
      err << "gleaner: skipped " << vc.cleaning.bad_rows_skipped << " dirty rows in all in "
          << vc.name << "\n";
    }
    skipped += vc.cleaning.bad_rows_skipped;
  }
  auto study = sim::RunCrossClusterStudy(*vcs);
  if (!study.ok()) {
    err << "gleaner: " << study.status().message() << "\n";
    return kExitBadInput;
  }
  const std::string metrics_json = sim::CrossClusterMetricsJson(*study).dump(2) + "\n";
  const std::string report = sim::RenderCrossClusterReport(*study);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  nlohmann::ordered_json timing;
  timing["wall_s"] = wall_s;
  timing["peak_rss_bytes"] = PeakRssBytes();
  timing["minutes_per_s"] = wall_s > 0 ? static_cast<double>(study->minutes.size()) / wall_s : 0.0;

  if (!WriteSimOutputs(o.out_dir, {metrics_json, timing.dump(2) + "\n", report}, err))
    return kExitFailure;
  const sim::CrossClusterStudy& s = *study;
  const auto hours = [](int64_t gpu_minutes) { return static_cast<double>(gpu_minutes) / 60; };
  const auto pct = [](int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  char line[600];
  std::snprintf(line, sizeof line,
                "gleaner sim cross-cluster: %zu VCs, %zu minutes (%lld left out, %lld dirty rows "
                "skipped): pending beside idle in %.1f %% of minutes; %.0f of %.0f pending "
                "GPU-hours (%.1f %%) could have run on other VCs' idle GPUs (small jobs: %.0f of "
                "%.0f); %.0f idle GPU-hours; %.3f s wall\n",
                s.vcs.size(), s.minutes.size(), static_cast<long long>(s.minutes_dropped_unaligned),
                static_cast<long long>(skipped),
                pct(s.minutes_pending_beside_idle, static_cast<int64_t>(s.minutes.size())),
                hours(s.lendable_gpu_minutes), hours(s.pending_gpu_minutes),
                pct(s.lendable_gpu_minutes, s.pending_gpu_minutes),
                hours(s.lendable_small_gpu_minutes), hours(s.pending_small_gpu_minutes),
                hours(s.idle_gpu_minutes), wall_s);
  out << line << "wrote " << (std::filesystem::path(o.out_dir) / "metrics.json").string()
      << ", timing.json, report.html\n";
  return kExitOk;
}

}  // namespace gleaner::cli
