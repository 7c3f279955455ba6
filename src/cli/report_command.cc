#include "cli/report_command.h"

#include <ostream>

#include "cli/api_client.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "config/catalog_files.h"
#include "config/data_dir.h"
#include "config/trusted_paths.h"
#include "core/format.h"
#include "core/private_file.h"
#include "daemon/daemon_start.h"
#include "report/site_report.h"
#include "sim/svg_chart.h"

namespace gleaner::cli {

CLI::App* AddReportCommand(CLI::App& app, ReportOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write the periodic HTML report: what the GPUs did and cost, what happened to the jobs, "
      "and the running policy replayed on the span");
  cmd->add_option("--since", o.since, "The span: 24h, 7d, 30d back from now, or YYYY-MM-DD")
      ->capture_default_str();
  cmd->add_option("--until", o.until, "Its end: YYYY-MM-DD (default: now)");
  cmd->add_option("-o,--out", o.out, "The HTML file to write")->capture_default_str();
  cmd->add_option("--config", o.config,
                  "The running policy's file (default: DATA_DIR/gleaner.toml)");
  cmd->add_option("--data-dir", o.data_dir, "Where `gleaner up` keeps its state");
  return cmd;
}

int RunReport(const ReportOptions& o, core::TimePoint now, std::ostream& out, std::ostream& err) {
  auto span = server::ParseReportSpan(o.since, o.until, now);
  if (!span.ok()) {
    err << "gleaner: --" << span.status().message() << "\n";
    return kExitUsage;
  }
  const std::string data_dir = config::DataDir(o.data_dir);
  auto config = config::LoadCommandConfig(data_dir, o.config);
  if (!config.ok()) {
    err << "gleaner: " << config.status().message() << "\n";
    return kExitBadInput;
  }
  auto store = daemon::OpenHistory(data_dir);
  if (!store.ok()) return Fail(err, store.status());
  if (auto s = config::CheckOutputDirTrusted(o.out); !s.ok()) return Fail(err, s);
  auto catalog = config::LoadCatalog(config->cost.catalog_files);
  if (!catalog.ok()) return Fail(err, catalog.status());
  auto report = report::BuildSiteReport(**store, *config, *catalog, span->first, span->second);
  if (!report.ok()) return Fail(err, report.status());
  // Written whole beside the old one and renamed, so a reader never sees
  // half a page; readable by all, like any report.
  if (auto s = core::ReplaceFile(o.out, report::RenderSiteReport(*report), 0644); !s.ok()) {
    return Fail(err, s);
  }
  const cost::CostLine& t = report->ledger.report.total;
  out << "wrote " << o.out << ": " << core::FormatFixed(t.observed_h, 1) << " GPU-hours observed, "
      << core::FormatFixed(t.idle_h + t.held_idle_h, 1) << " idle ("
      << core::FormatFixed(t.held_idle_h, 1) << " held), " << core::FormatFixed(t.harvested_h, 1)
      << " harvested; " << report->jobs.submitted << " job(s) submitted"
      << (report->scenario ? "" : "; not replayed: " + report->replay_missing) << "\n";
  return kExitOk;
}

}  // namespace gleaner::cli
