#!/usr/bin/env bash
# Sets up, builds and runs gleaner on a fresh Debian 12 machine.
#   scripts/quickstart.sh up     install what is missing, build, start gleaner up
#   scripts/quickstart.sh test   install what is missing, build, run every test
# Run as root (or with sudo available): packages come from apt.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build="${GLEANER_BUILD_DIR:-$here/build}"
# shellcheck source=scripts/install_missing.sh
source "$here/scripts/install_missing.sh"
# What the build needs (gleaner_build_packages, nodejs and npm included when
# no npm is there), the test and benchmark libraries, and openssl, which
# makes the cluster secret in the README's "Many hosts".
packages=("${gleaner_build_packages[@]}" libgtest-dev libgmock-dev libbenchmark-dev openssl)
# For the tests only, and required, since they must run wherever CI runs:
# the PostgreSQL store's tests start a throwaway server (initdb, pg_ctl),
# and a real Prometheus (with promtool) scrapes and lints /metrics; the
# Slurm tests start a whole Slurm cluster on this host (docs/slurm.md);
# systemd-analyze checks the units in deploy/systemd (docs/systemd.md);
# lintian the .deb packages (docs/install.md); container jobs run with
# rootless podman on an image made from busybox (docs/jobs.md); the
# release binary runs in a Debian 11 root that debootstrap makes
# (docs/install.md); python3 re-runs docs/benchmarks.md's quick tables
# (scripts/benchmark_tables.py) and the shell blocks of README.md and docs/
# (scripts/doc_commands.py) and checks that each module includes only what
# it links (scripts/check_includes.py); clang-format checks the sources'
# format (scripts/check_format.sh), clang the locking rules
# (scripts/check_thread_safety.py) and clang-tidy a short profile of bugs
# (scripts/check_tidy.py).
test_packages=(python3 clang-format clang clang-tidy postgresql prometheus slurmctld slurmd slurm-client slurmrestd slurm-wlm-jwt-plugin munge
  systemd lintian podman runc catatonit uidmap containernetworking-plugins busybox-static debootstrap)
# For the tests only, and not required: the browser tests (the reports,
# the dashboard) skip without Chromium.
optional_test_packages=(chromium)

build() {  # build [TARGET]: everything, or only TARGET
  # The static build is what gets copied onto GPU servers, so it is the one
  # we run and test. Warnings are errors where GLEANER_WERROR=ON asks
  # (.ci/run, developers).
  cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGLEANER_STATIC=ON \
    -DGLEANER_WERROR="${GLEANER_WERROR:-OFF}" >/dev/null
  cmake --build "$build" ${1:+--target "$1"}
}

case "${1:-}" in
  up)
    install_missing "${packages[@]}"
    build gleaner  # only what runs: the tests and benchmarks wait for `test`
    shift
    # Where there is no NVIDIA hardware, gleaner up says so and runs on the
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
    if ! ctest --test-dir "$build" --output-on-failure -j "$(nproc)"; then
      # What failed, again and last, so that the end of the log (all that
      # some CI systems keep) says why, and whether it fails alone too.
      echo "gleaner: tests failed; running them again, one at a time:" >&2
      ctest --test-dir "$build" --rerun-failed --output-on-failure || true
      exit 1
    fi
    ;;
  *)
    echo "usage: $0 up|test" >&2
    exit 2
    ;;
esac
