# Compile settings shared by every target built from our own sources. With
# GLEANER_WERROR (CI and developers) warnings are errors, never in
# third-party headers (those come in as SYSTEM); without it, another
# compiler's new warning does not stop someone building gleaner to run it.
function(gleaner_target_options target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
    -Wnon-virtual-dtor -Wold-style-cast $<$<BOOL:${GLEANER_WERROR}>:-Werror>)
  # GCC 12 at -O3 (Release) sees an overlap in libstdc++'s own
  # "literal" + std::string that cannot happen (GCC bug 105651): a false
  # warning on most files, so it is off in that build.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-Wno-restrict>)
  endif()
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
