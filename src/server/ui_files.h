#pragma once

#include <string>

#include "server/http_message.h"

namespace gleaner::server {

// The dashboard's files (docs/ui.md), for anyone, token or not: they hold
// no data; the page asks the API for that with its reader's token.
//   GET /          the page (ui/index.html)
//   GET /ui/PATH   its scripts, styles, strings, icon and uPlot
// Each answer carries kDashboardPolicy as its Content-Security-Policy.

// Whether `target` (a request's path, with or without a query) is one of
// the dashboard's.
bool IsUiPath(const std::string& target);

// The file for a GET of a UI path; 404 for a file that does not exist,
// 405 for another method.
HttpResponse ServeUiFile(const HttpRequest& request);

// The page may load scripts, styles and images only from this server and
// talk only to it; no inline script or style element runs, nothing is
// loaded from elsewhere, no form posts away, and no other site may frame
// it (clickjacking).
inline constexpr const char* kDashboardPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace gleaner::server
