#pragma once

#include <span>
#include <string_view>

namespace gleaner::ui {

// One file of the web dashboard (ui/ in the repository, and uPlot from
// npm), compiled into the binary at build time (src/ui/CMakeLists.txt).
struct EmbeddedFile {
  std::string_view path;  // where it is served: "/ui/index.html", "/ui/js/main.js"
  std::string_view body;
};

// Every file of the dashboard, in the order src/ui/CMakeLists.txt lists
// them. The views point into static storage and live as long as the
// program.
std::span<const EmbeddedFile> EmbeddedFiles();

// The file served at `path` ("/ui/js/main.js"), or nullptr.
const EmbeddedFile* FindEmbeddedFile(std::string_view path);

// The Content-Type for a file, by its extension: .html, .css, .js, .json
// and .txt as UTF-8 text, .svg and .png as images; anything else is
// application/octet-stream (which a browser will not run or style).
std::string_view ContentTypeOf(std::string_view path);

}  // namespace gleaner::ui
