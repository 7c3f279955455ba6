#pragma once

#include <string>

namespace gleaner::core {

// This host's name as the kernel has it (gethostname); "localhost" where
// it cannot be read.
std::string Hostname();

}  // namespace gleaner::core
