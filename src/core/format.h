#pragma once

#include <string>

#include "core/units.h"

namespace gleaner::core {

// "45s", "2m10s", "1h05m", "3d04h": short, for people.
std::string FormatDuration(Duration d);

// "37.5 GiB", "512 MiB".
std::string FormatBytes(Bytes b);

}  // namespace gleaner::core
