# Writes a C++ source that holds files as byte arrays, so that the binary
# serves them with nothing beside it. Run at build time:
#   cmake -DMANIFEST=files.txt -DOUTPUT=embedded.cc -P EmbedFiles.cmake
# MANIFEST has one "SERVED_PATH SOURCE_FILE" per line. Byte arrays rather
# than string literals: no delimiter can clash with the contents, and no
# literal outgrows the 64 KiB that -Wpedantic allows.
file(STRINGS "${MANIFEST}" lines)
set(arrays "")
set(entries "")
set(i 0)
foreach(line IN LISTS lines)
  string(FIND "${line}" " " space)
  string(SUBSTRING "${line}" 0 ${space} served)
  math(EXPR after "${space} + 1")
  string(SUBSTRING "${line}" ${after} -1 source)
  file(READ "${source}" hex HEX)
  string(LENGTH "${hex}" hex_length)
  math(EXPR size "${hex_length} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # A trailing 0 keeps an empty file's array legal; it is not part of the file.
  string(APPEND arrays "const unsigned char kFile${i}[] = {${bytes}0};\n")
  string(APPEND entries "      {\"${served}\", Text(kFile${i}, ${size})},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE "${OUTPUT}" "// Generated at build time by cmake/EmbedFiles.cmake from ${MANIFEST}.
#include <array>

#include \"ui/embedded_files.h\"

namespace gleaner::ui {
namespace {

${arrays}
std::string_view Text(const unsigned char* bytes, size_t size) {
  return {reinterpret_cast<const char*>(bytes), size};
}

}  // namespace

std::span<const EmbeddedFile> EmbeddedFiles() {
  static const std::array<EmbeddedFile, ${i}> kFiles = {{
${entries}  }};
  return kFiles;
}

}  // namespace gleaner::ui
")
