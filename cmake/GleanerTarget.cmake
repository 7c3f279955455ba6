# Compile settings shared by every target built from our own sources: warnings
# are errors here, never in third-party headers (those come in as SYSTEM).
function(gleaner_target_options target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Werror)
endfunction()

# A module library: `deps` is its whole dependency rule (see docs/architecture.md).
function(gleaner_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(gleaner_${name} STATIC ${ARG_SOURCES})
  add_library(gleaner::${name} ALIAS gleaner_${name})
  target_include_directories(gleaner_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(gleaner_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  gleaner_target_options(gleaner_${name})
endfunction()
