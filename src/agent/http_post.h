#pragma once

#include <string>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::agent {

// POSTs `body` as JSON to an https:// URL (the server's certificate checked
// against the system's CAs and the URL's host) or an http:// one, and
// returns the response status code. Blocking, with `timeout` for
// connecting and for each read or write. Thread-safe.
core::Result<int> HttpPostJson(const std::string& url, const std::string& body,
                               core::Duration timeout);

}  // namespace gleaner::agent
