# Sourced by scripts/quickstart.sh, scripts/fuzz.sh and scripts/sanitize.sh.
#
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

# What configuring and building gleaner needs (scripts/quickstart.sh's list).
gleaner_build_packages=(build-essential cmake ninja-build pkg-config nlohmann-json3-dev libcli11-dev
                        libsqlite3-dev libtomlplusplus-dev libpq-dev libssl-dev)
# The build fetches uPlot with npm; an npm that came some other way will do.
command -v npm >/dev/null || gleaner_build_packages+=(nodejs npm)
