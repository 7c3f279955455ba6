#include "server/ui_files.h"

#include "server/routing.h"
#include "ui/embedded_files.h"

namespace gleaner::server {
namespace {

std::string PathOf(const std::string& target) { return target.substr(0, target.find('?')); }

}  // namespace

bool IsUiPath(const std::string& target) {
  const std::string path = PathOf(target);
  return path == "/" || path == "/index.html" || path.rfind("/ui/", 0) == 0;
}

HttpResponse ServeUiFile(const HttpRequest& request) {
  if (request.method != "GET") return WrongMethod(request);
  std::string path = PathOf(request.path);
  if (path == "/" || path == "/index.html") path = "/ui/index.html";
  const ui::EmbeddedFile* file = ui::FindEmbeddedFile(path);
  if (file == nullptr) {
    return ErrorResponse(core::NotFound("no file " + path + " in the dashboard"));
  }
  HttpResponse r{200, std::string(file->body), std::string(ui::ContentTypeOf(file->path)), {}};
  r.headers = {{"Content-Security-Policy", kDashboardPolicy},
               {"X-Content-Type-Options", "nosniff"},
               {"Referrer-Policy", "no-referrer"},
               // The files change only with the binary; a browser asks
               // again rather than keep a stale page after an upgrade.
               {"Cache-Control", "no-cache"}};
  return r;
}

}  // namespace gleaner::server
