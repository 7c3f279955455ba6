#!/usr/bin/env bash
# A GLEANER_STATIC build must need nothing at run time but glibc, so it can
# be copied onto any GPU server.
set -euo pipefail
binary="$1"
glibc='^(linux-vdso\.so|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|ld-linux[^ ]*\.so)'
others=$(ldd "$binary" | awk '{print $1}' | sed 's|.*/||' | grep -Ev "$glibc" || true)
if [ -n "$others" ]; then
  echo "FAIL: $binary needs more than glibc:"
  echo "$others"
  exit 1
fi
# And it runs with an empty environment.
# (Captured first: grep -q would close the pipe early, and pipefail would
# count the writer's SIGPIPE as a failure.)
output=$(env -i "$binary" gpus --fake demo --json)
grep -q '"schema": "gleaner.gpus/v1"' <<<"$output"
echo "OK: $binary needs only glibc"
