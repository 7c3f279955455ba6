#!/usr/bin/env bash
# Builds gleaner and its tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (any report fails the test that caused it) and
# runs the tests: the unit tests unless ctest arguments say which.
#   scripts/sanitize.sh [CTEST_ARGS...]     e.g. -L integration, or -R JobSpec
# The build goes to build-asan/ (GLEANER_ASAN_BUILD_DIR overrides); the
# compiler is $CXX, else g++. CMAKE_BUILD_PARALLEL_LEVEL limits the build's
# jobs. Run as root (or with sudo) where packages are missing.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build="${GLEANER_ASAN_BUILD_DIR:-$here/build-asan}"
# shellcheck source=scripts/install_missing.sh
source "$here/scripts/install_missing.sh"
install_missing "${gleaner_build_packages[@]}" libgtest-dev libgmock-dev

sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# GCC's flow analysis, given the sanitizers' instrumentation, sees
# uninitialized uses in libstdc++'s std::regex that are not there.
warnings="-Wno-maybe-uninitialized"
# The static build cannot carry the sanitizers' runtimes; benchmarks are
# not tests.
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="${CXX:-g++}" -DCMAKE_CXX_FLAGS="$sanitize $warnings" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitize" -DCMAKE_SHARED_LINKER_FLAGS="$sanitize" \
  -DGLEANER_STATIC=OFF -DGLEANER_BUILD_BENCHMARKS=OFF -DGLEANER_FUZZ=OFF >/dev/null
cmake --build "$build"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
[ $# -eq 0 ] && set -- -L unit
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
