#!/usr/bin/env bash
# The dashboard builds without a network and without npm, from uPlot's npm
# tarball checked against ui/package-lock.json (docs/ui.md, Building
# offline); a tarball that is not the pinned one is refused.
#   offline_build_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1"
build="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
integrity=$(sed -n '/node_modules\/uplot/,/}/s/.*"integrity": "\(sha512-[^"]*\)".*/\1/p' \
  "$src/ui/package-lock.json")
version=$(sed -n '/node_modules\/uplot/,/}/s/.*"version": "\([^"]*\)".*/\1/p' \
  "$src/ui/package-lock.json")

echo "not uplot" >"$work/tampered.tgz"
if cmake -DTARBALL="$work/tampered.tgz" -DINTEGRITY="$integrity" -DOUT="$work/x" \
  -P "$src/cmake/UplotTarball.cmake" 2>"$work/err"; then
  echo "FAIL: a tampered tarball was accepted"
  exit 1
fi
# CMake wraps its messages: join the lines first.
tr -s " \n" "  " <"$work/err" | grep -q "is not the uplot that ui/package-lock.json pins"

# The genuine tarball, from the npm cache the normal build filled.
(cd "$work" && npm pack "uplot@$version" --offline --loglevel=error >/dev/null) || {
  echo "FAIL: npm pack uplot@$version --offline: the normal build should have cached it"
  exit 1
}
# A whole configure and the dashboard's build, with the network cut off
# where this machine allows a namespace of its own (root in CI does).
offline=()
if unshare -n true 2>/dev/null; then offline=(unshare -n); fi
"${offline[@]}" cmake -S "$src" -B "$work/build" -G Ninja -DGLEANER_BUILD_TESTS=OFF \
  -DGLEANER_BUILD_BENCHMARKS=OFF -DGLEANER_UPLOT_TARBALL="$work/uplot-$version.tgz" >/dev/null
"${offline[@]}" cmake --build "$work/build" --target gleaner_ui >/dev/null
# What it embeds is what npm ci installed.
cmp "$work/build/src/ui/uplot-tarball/package/dist/uPlot.iife.min.js" \
  "$build/src/ui/npm/node_modules/uplot/dist/uPlot.iife.min.js"
echo "OK: the dashboard built ${offline[*]:+with no network }from uplot-$version.tgz"
