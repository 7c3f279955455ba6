#pragma once

#include "server/http_message.h"

namespace gleaner::server {

// Whether `request` is one an anonymous reader may make where the site
// allows it ([ui] anonymous_read in gleaner.toml, docs/ui.md): a GET of
// what the dashboard shows, /v1/gpus, /v1/jobs and /v1/jobs/ID (never
// another's env, never logs), /v1/history, /v1/profiles,
// /v1/cost/report and /v1/whoami. Everything else, every write
// included, still needs a token.
bool AnonymousMayRead(const HttpRequest& request);

}  // namespace gleaner::server
