#pragma once

#include <functional>
#include <string>

namespace gleaner::cluster {

// Where a component says what it did, a line at a time.
using Log = std::function<void(const std::string&)>;

}  // namespace gleaner::cluster
