#include "ui/embedded_files.h"

#include <array>
#include <utility>

namespace gleaner::ui {

const EmbeddedFile* FindEmbeddedFile(std::string_view path) {
  // A score of files, asked for once per page load: a scan will do.
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

std::string_view ContentTypeOf(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".json", "application/json; charset=utf-8"},
      {".txt", "text/plain; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
  }};
  for (const auto& [extension, type] : kTypes) {
    if (path.ends_with(extension)) return type;
  }
  return "application/octet-stream";
}

}  // namespace gleaner::ui
