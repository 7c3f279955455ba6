#include "core/format.h"

#include <cstdio>

namespace gleaner::core {

std::string FormatDuration(Duration d) {
  const int64_t s = d.count() / 1'000'000;
  char buf[32];
  if (d.count() < 0) return "-" + FormatDuration(-d);
  if (s == 0 && d.count() > 0) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(d.count() / 1000));
  } else if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s % 3600 / 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(s / 86400),
                  static_cast<long long>(s % 86400 / 3600));
  }
  return buf;
}

std::string FormatBytes(Bytes b) {
  char buf[32];
  if (b >= Bytes::GiB(1)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", b.ToGiB());
  } else {
    std::snprintf(buf, sizeof buf, "%.0f MiB", b.ToMiB());
  }
  return buf;
}

}  // namespace gleaner::core
