#include "core/host_name.h"

#include <unistd.h>

namespace gleaner::core {

std::string Hostname() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? buf : "localhost";
}

}  // namespace gleaner::core
