#include "server/refusal_log.h"

#include "core/format.h"

namespace gleaner::server {

void RefusalLog::Note(const std::string& kind, const std::string& line) {
  const core::TimePoint now = clock_.Now();
  std::string out;
  {
    core::MutexLock lock(mu_);
    auto [it, fresh] = windows_.try_emplace(kind, Window{now, 0});
    Window& w = it->second;
    if (!fresh && now - w.opened < kWindow) {
      ++w.held;
      return;
    }
    out = core::OneLine(line);
    if (w.held > 0) {
      out += " (and " + std::to_string(w.held) + " more " + kind + " refusal" +
             (w.held == 1 ? "" : "s") + " in the " + core::FormatDuration(now - w.opened) +
             " before)";
    }
    w = Window{now, 0};
  }
  log_(out);
}

}  // namespace gleaner::server
