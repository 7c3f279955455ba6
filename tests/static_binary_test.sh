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
# And on every glibc from 2.28 on (RHEL 8; Debian 11 and Ubuntu 20.04 have
# 2.31): no symbol asks for a newer version (cmake/OldGlibc.cmake).
newer=$(objdump -T "$binary" | grep -oE 'GLIBC_2\.(29|[3-9][0-9])[.0-9]*\) +[^ ]+$' || true)
if [ -n "$newer" ]; then
  echo "FAIL: $binary needs a glibc newer than 2.28 for (add each to cmake/OldGlibc.cmake):"
  echo "$newer"
  exit 1
fi
# And it runs with an empty environment.
# (Captured first: grep -q would close the pipe early, and pipefail would
# count the writer's SIGPIPE as a failure.)
output=$(env -i "$binary" gpus --fake demo --json)
grep -q '"schema": "gleaner.gpus/v1"' <<<"$output"
echo "OK: $binary needs only glibc, 2.28 or newer"
