#!/usr/bin/env bash
# Sets up, builds and runs gleaner on a fresh Debian 12 machine.
#   scripts/quickstart.sh up     install what is missing, build, start gleaner up
#   scripts/quickstart.sh test   install what is missing, build, run every test
# Run as root (or with sudo available): packages come from apt.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build="${GLEANER_BUILD_DIR:-$here/build}"
packages=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev libsqlite3-dev libtomlplusplus-dev
          libpq-dev libgtest-dev libgmock-dev libbenchmark-dev)
# nodejs and npm: the build fetches uPlot for the web dashboard with `npm ci`
# (pinned by ui/package-lock.json) and compiles it into the binary. An npm
# that came some other way (NodeSource's nodejs bundles it) will do.
command -v npm >/dev/null || packages+=(nodejs npm)
# For the tests only, and required, since they must run wherever CI runs:
# the PostgreSQL store's tests start a throwaway server (initdb, pg_ctl),
# and a real Prometheus (with promtool) scrapes and lints /metrics.
test_packages=(postgresql prometheus)
# For the tests only, and not required: the browser tests (the reports,
# the dashboard) skip without Chromium.
optional_test_packages=(chromium)

# install_missing [optional] PACKAGES...: an optional set may fail to
# install (a mirror without it) with a warning instead of an error.
install_missing() {
  local optional=""
  if [ "${1:-}" = optional ]; then optional=1; shift; fi
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "gleaner: run as root to install: ${missing[*]}" >&2
      [ -n "$optional" ] && return 0
      exit 1
    fi
    sudo=sudo
  fi
  echo "gleaner: installing ${missing[*]}"
  $sudo apt-get update -qq
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${missing[@]}"; then
    [ -n "$optional" ] || exit 1
    echo "gleaner: could not install ${missing[*]}; the tests that need them will skip" >&2
  fi
}

build() {
  # The static build is what gets copied onto GPU servers, so it is the one
  # we run and test.
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGLEANER_STATIC=ON >/dev/null
  cmake --build "$build"
}

case "${1:-}" in
  up)
    install_missing "${packages[@]}"
    build
    shift
    # Where there is no NVIDIA driver, gleaner up says so and runs on the
    # built-in simulated GPUs. Submit from another terminal:
    #   build/gleaner --data-dir "$data" submit --gpus 1 -- sleep 60
    data="${GLEANER_DATA_DIR:-$here/.gleaner}"
    echo "gleaner: state in $data; try: $build/gleaner --data-dir $data submit --gpus 1 -- sleep 60" >&2
    exec "$build/gleaner" up --data-dir "$data" "$@"
    ;;
  test)
    install_missing "${packages[@]}"
    install_missing "${test_packages[@]}"
    install_missing optional "${optional_test_packages[@]}"
    build
    ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
    ;;
  *)
    echo "usage: $0 up|test" >&2
    exit 2
    ;;
esac
