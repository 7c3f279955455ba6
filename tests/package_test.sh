#!/usr/bin/env bash
# The .deb packages (cmake/Packaging.cmake): built with cpack, installed
# with dpkg into an empty root, and gleaner runs from there.
#   package_test.sh BUILD_DIR
set -euo pipefail
build="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$build" && cpack -G DEB -B "$work/pkg" >/dev/null)
deb=$(ls "$work"/pkg/gleaner_*_amd64.deb)
pg=$(ls "$work"/pkg/gleaner-pg_*_amd64.deb)

# A clean root with an empty dpkg database; the maintainer script runs
# outside a chroot, on $DPKG_ROOT.
root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-script-chrootless -i "$deb" >/dev/null
dpkg --root="$root" -s gleaner | grep -q "Status: install ok installed"
grep -qx /etc/gleaner/gleaner.toml "$root/var/lib/dpkg/info/gleaner.conffiles"
# The config is root's alone (it may name secrets).
mode=$(stat -c %a "$root/etc/gleaner/gleaner.toml")
[ "$mode" = 600 ] || { echo "FAIL: /etc/gleaner/gleaner.toml is installed $mode, not 600"; exit 1; }

gleaner="$root/usr/bin/gleaner"
"$gleaner" --version | grep -Eq '^gleaner [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]{12}'
output=$(env -i "$gleaner" gpus --fake demo --json)
grep -q '"schema": "gleaner.gpus/v1"' <<<"$output"
for f in usr/lib/systemd/system/gleaner.service usr/lib/systemd/system/gleaner-agent.service \
  usr/lib/systemd/system/gleaner-server.service usr/share/man/man1/gleaner.1.gz \
  usr/share/bash-completion/completions/gleaner usr/share/zsh/vendor-completions/_gleaner \
  etc/gleaner/gleaner.toml; do
  test -s "$root/$f" || { echo "FAIL: the package lacks /$f"; exit 1; }
done
# The manual covers every command; the completion knows them.
zcat "$root/usr/share/man/man1/gleaner.1.gz" | grep -q '^\.SS doctor'
bash -c "source '$root/usr/share/bash-completion/completions/gleaner'; complete -p gleaner" \
  | grep -q _gleaner_complete
# The installed config is every default, commented out: it changes nothing,
# and the defaults it shows are a config gleaner reads.
if grep -Ev '^(#|$)' "$root/etc/gleaner/gleaner.toml"; then
  echo "FAIL: the shipped config sets something"
  exit 1
fi
sed -n '/^# \[idle\]/,$s/^# //p' "$root/etc/gleaner/gleaner.toml" | grep -v '^#' \
  >"$work/uncommented.toml"
chmod 600 "$work/uncommented.toml"
"$gleaner" doctor --fake demo --listen none --data-dir "$work/data" \
  --config "$work/uncommented.toml" | grep -q "^ok    config"

dpkg-deb -f "$pg" Depends | grep -q libpq5
test -s "$root/usr/share/doc/gleaner/copyright"
zcat "$root/usr/share/doc/gleaner/changelog.gz" | head -1 | grep -q '^gleaner ([0-9.]*) unstable'

# Debian's policy checker: nothing but the maintainer's address, which is
# each site's to set (-DGLEANER_PACKAGE_MAINTAINER; docs/install.md).
if command -v lintian >/dev/null; then
  findings=$(lintian --suppress-tags bogus-mail-host,bogus-mail-host-in-debian-changelog \
    "$deb" "$pg" 2>&1 | grep -E '^[EW]:' || true)
  if [ -n "$findings" ]; then
    echo "FAIL: lintian found:"
    echo "$findings"
    exit 1
  fi
else
  echo "note: lintian is not installed; the packages were not checked against Debian's policy"
fi
echo "OK: $(basename "$deb") and $(basename "$pg") install and run"
