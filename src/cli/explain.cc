#include "cli/explain.h"

#include <ostream>

#include "cli/exit_codes.h"
#include "core/civil_time.h"
#include "core/format.h"
#include "observe/verdict_json.h"

namespace gleaner::cli {
namespace {

using core::FormatDuration;

const views::GpuView* Find(const views::HostView& view, const std::string& which,
                           std::string* problem) {
  const views::GpuView* found = nullptr;
  for (const views::GpuView& g : view.gpus) {
    const bool match = std::to_string(g.snapshot.index) == which ||
                       (!g.snapshot.uuid.empty() && g.snapshot.uuid.str().rfind(which, 0) == 0);
    if (!match) continue;
    if (found != nullptr) {
      *problem = "\"" + which + "\" matches more than one GPU; give more of the UUID";
      return nullptr;
    }
    found = &g;
  }
  if (found == nullptr) {
    *problem = "no GPU \"" + which + "\"; give an index (0-" +
               std::to_string(view.gpus.empty() ? 0 : view.gpus.size() - 1) +
               ") or a UUID (see `gleaner gpus`)";
  }
  return found;
}

}  // namespace

int Explain(const views::HostView& view, const std::string& which, const observe::IdleConfig& c,
            std::ostream& out, std::ostream& err) {
  std::string problem;
  const views::GpuView* g = Find(view, which, &problem);
  if (g == nullptr) {
    err << "gleaner: " << problem << "\n";
    return kExitUsage;
  }
  const gpu::GpuSnapshot& s = g->snapshot;
  out << "GPU " << s.index << "  " << (s.uuid.empty() ? "(no UUID)" : s.uuid.str()) << "  "
      << s.name.value_or("?") << "\n";
  if (!g->verdict) {
    out << "state      (no verdict)\n";
    return kExitOk;
  }
  const observe::Verdict& v = *g->verdict;
  const observe::Evidence& e = v.evidence;
  out << "state      " << observe::GpuStateName(v.state) << " since " << core::Rfc3339(v.since)
      << " (" << FormatDuration(view.taken_at - v.since) << ")\n";
  out << "why        " << e.reason << "\n";
  out << "evidence   utilization now "
      << (e.utilization_pct ? core::FormatPercent(*e.utilization_pct) : std::string("unreadable"))
      << ", at most " << core::FormatPercent(e.max_utilization_pct_in_window) << " over the last "
      << FormatDuration(std::max(c.idle_after, c.held_idle_after)) << "\n";
  out << "           under " << core::FormatPercent(c.busy_utilization_pct) << " for "
      << FormatDuration(e.quiet_for) << "; continuous data for " << FormatDuration(e.observed_for)
      << "\n";
  out << "           processes: " << e.processes;
  if (e.processes > 0) out << ", holding " << core::FormatBytes(e.process_memory);
  out << "\n";
  if (e.power_w) {
    out << "           power " << static_cast<long>(*e.power_w) << " W";
    if (e.idle_power_w) out << " (idle baseline " << static_cast<long>(*e.idle_power_w) << " W)";
    out << "\n";
  }
  if (e.confidence) {
    out << "           " << core::FormatPercent(*e.confidence * 100) << " of " << e.similar_pauses
        << " similar pauses stayed quiet " << FormatDuration(c.horizon) << " more (idle needs "
        << core::FormatPercent(c.min_confidence * 100) << "; history trusted after "
        << c.trusted_pauses << " pauses)\n";
  }
  if (e.quiet_forecast) {
    const observe::QuietForecast& f = *e.quiet_forecast;
    out << "forecast   quiet for " << FormatDuration(f.p80) << " more at 80 % chance, "
        << FormatDuration(f.p50) << " at 50 %, " << FormatDuration(f.p20) << " at 20 % (from "
        << f.spells << (f.own ? " of its own" : " of the host's")
        << " quiet spells longer than this one so far)\n";
  }
  out << "thresholds busy at " << core::FormatPercent(c.busy_utilization_pct) << "; idle after "
      << FormatDuration(c.idle_after) << " (" << FormatDuration(c.idle_after_with_history)
      << " with trusted history); held idle after " << FormatDuration(c.held_idle_after)
      << "; gaps over " << FormatDuration(c.max_sample_gap) << " restart the clock\n";
  if (v.state == observe::GpuState::kUnknown) {
    out << "note       one reading has no history: run `gleaner monitor` (or `gleaner gpus "
           "--watch`) to judge over time\n";
  }
  return kExitOk;
}

}  // namespace gleaner::cli
