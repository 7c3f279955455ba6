#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each over a copy of its seed corpus
# (fuzz/corpus/<target>/) for SECONDS_PER_TARGET seconds.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]    default 20
# Prints one line per target; exits non-zero when any target crashed, hung,
# leaked or broke a property. The inputs that did it, each target's log and
# its grown corpus stay in BUILD/fuzz-out/<target>/; the build goes to
# build-fuzz/ (GLEANER_FUZZ_BUILD_DIR overrides). Reproduce one input with
# BUILD/fuzz/<target> FILE. Run as root (or with sudo) where clang is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
seconds="${1:-20}"
build="${GLEANER_FUZZ_BUILD_DIR:-$here/build-fuzz}"
case "$seconds" in '' | *[!0-9]*) echo "usage: $0 [SECONDS_PER_TARGET]" >&2; exit 2 ;; esac

# shellcheck source=scripts/install_missing.sh
source "$here/scripts/install_missing.sh"
# libFuzzer and the sanitizers' runtimes are in libclang-rt-dev, which clang
# only recommends.
install_missing "${gleaner_build_packages[@]}" clang libclang-rt-dev

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DGLEANER_FUZZ=ON -DGLEANER_STATIC=OFF \
  -DGLEANER_BUILD_TESTS=OFF -DGLEANER_BUILD_BENCHMARKS=OFF >/dev/null
# Only the targets and the libraries they link.
cmake --build "$build" --target gleaner_fuzzers

# What libFuzzer leaves for an input that failed: a crash or sanitizer
# report, a leak, a hang past -timeout, memory past -rss_limit_mb.
failing_inputs() {
  find "$1" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \)
}

failed=0
for seeds in "$here"/fuzz/corpus/*/; do
  target=$(basename "$seeds")
  binary="$build/fuzz/$target"
  if [ ! -x "$binary" ]; then
    printf '%-22s not built (fuzz/CMakeLists.txt says why)\n' "$target"
    continue
  fi
  out="$build/fuzz-out/$target"
  rm -rf "$out"
  mkdir -p "$out/corpus"
  cp "$seeds"* "$out/corpus/"
  # -max_len: 4 KiB holds every seed and keeps JSON nesting shallower than
  # the depth (about 100,000) at which recursion over a document overflows
  # the stack; docs/benchmarks.md, Fuzzing.
  rc=0
  (cd "$out" && "$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" >"$out/log" 2>&1) || rc=$?
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log")
  if [ -z "$executions" ]; then
    # Stopped early: the last status line counts the executions so far.
    executions=$(grep -o '^#[0-9]*' "$out/log" | tail -1 | tr -d '#' || true)
  fi
  crashes=$(failing_inputs "$out" | wc -l)
  printf '%-22s %10s executions in %ss  %s crashes\n' "$target" "${executions:-0}" "$seconds" "$crashes"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    failed=1
    echo "  $target failed (exit $rc); its log ends:" >&2
    tail -n 30 "$out/log" | sed 's/^/    /' >&2
    failing_inputs "$out" | sed 's/^/  input: /' >&2
  fi
done
exit "$failed"
