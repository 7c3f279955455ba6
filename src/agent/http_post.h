#pragma once

#include <string>

#include "core/result.h"
#include "core/units.h"

namespace gleaner::agent {

// POSTs `body` as JSON to an http:// URL and returns the response status
// code. Plain HTTP only (put a TLS-terminating proxy in front for https);
// enough for webhooks on a trusted network or loopback. Blocking, with
// `timeout` for connecting and for each read or write. Thread-safe.
core::Result<int> HttpPostJson(const std::string& url, const std::string& body,
                               core::Duration timeout);

}  // namespace gleaner::agent
