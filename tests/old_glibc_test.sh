#!/usr/bin/env bash
# The release gleaner on Debian 11 (glibc 2.31, as on Ubuntu 20.04): in a
# Debian 11 root made with debootstrap from Debian's archive, it reads the
# GPUs through a driver library (the fake libnvidia-ml.so.1, built to load
# there too), and `gleaner up` on them runs a submitted job.
#   old_glibc_test.sh GLEANER FAKE_NVML_LIBRARY CACHE_DIR
# Exit 77 (skipped) where it cannot run: not root, or no debootstrap or
# archive to make the root with.
set -euo pipefail
gleaner="$1" fake_nvml="$2" cache="$3"
root="$cache/debian11-root"
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (chroot, mount)"
command -v debootstrap >/dev/null || skip "no debootstrap (apt-get install debootstrap)"
if [ ! -x "$root/bin/sh" ]; then
  rm -rf "$root.partial"
  mkdir -p "$cache"
  debootstrap --variant=minbase bullseye "$root.partial" http://deb.debian.org/debian \
    >"$cache/debootstrap.log" 2>&1 || skip "debootstrap failed (see $cache/debootstrap.log)"
  mv "$root.partial" "$root"
fi
# (Read whole: with pipefail, `| head -1` could fail ldd with SIGPIPE.)
glibc=$(chroot "$root" /usr/bin/ldd --version 2>&1 || true)
glibc=${glibc%%$'\n'*}
grep -q '2\.31' <<<"$glibc" || { echo "FAIL: not glibc 2.31: $glibc"; exit 1; }

here=/opt/gleaner-test
rm -rf "${root:?}$here"
mkdir -p "$root$here/data"
cp "$gleaner" "$root$here/gleaner"
cp "$fake_nvml" "$root$here/libnvidia-ml.so.1"
printf '[idle]\nidle_after_s = 2\nheld_idle_after_s = 2\nmin_expected_quiet_s = 0\n' \
  >"$root$here/data/gleaner.toml"
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
up=""
cleanup() {
  if [ -n "$up" ]; then
    kill "$up" 2>/dev/null || true
    wait "$up" 2>/dev/null || true
  fi
  umount "$root/proc" 2>/dev/null || true
}
trap cleanup EXIT
in_root() {
  chroot "$root" env -i PATH=/usr/bin:/bin GLEANER_FAKE_NVML_SCENARIO=demo "$@"
}

# The GPUs, through the real NVML loader.
gpus=$(in_root "$here/gleaner" gpus --nvml-library "$here/libnvidia-ml.so.1" --json)
grep -q '"source": "nvml"' <<<"$gpus" || { echo "FAIL: gpus: $gpus"; exit 1; }
[ "$(grep -c '"uuid": "GPU-' <<<"$gpus")" -ge 8 ] || { echo "FAIL: not 8 GPUs: $gpus"; exit 1; }

# The daemon, and a job on an idle GPU.
port=$((20000 + RANDOM % 20000))
in_root "$here/gleaner" up --nvml-library "$here/libnvidia-ml.so.1" --data-dir "$here/data" \
  --listen "127.0.0.1:$port" >"$cache/up.log" 2>&1 &
up=$!
submitted=""
for _ in $(seq 100); do
  submitted=$(in_root "$here/gleaner" --data-dir "$here/data" submit --gpus 1 -- \
    sh -c "echo ran on \$CUDA_VISIBLE_DEVICES > $here/ran" 2>&1) && break
  sleep 0.2
done
grep -q "submitted job 1" <<<"$submitted" || { echo "FAIL: submit: $submitted"; cat "$cache/up.log"; exit 1; }
for _ in $(seq 300); do
  [ -s "$root$here/ran" ] && break
  sleep 0.2
done
[ -s "$root$here/ran" ] || { echo "FAIL: the job did not run"; cat "$cache/up.log"; exit 1; }
echo "OK: on $glibc, gleaner read the GPUs through NVML and ran a job: $(cat "$root$here/ran")"
