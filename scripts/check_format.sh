#!/usr/bin/env bash
# Every C++ file of the tree is as clang-format writes it (.clang-format;
# Debian 12's clang-format 14, which CI installs). To fix what it lists:
#   git ls-files '*.cc' '*.h' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "clang-format is not installed: apt install clang-format" >&2
  exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
else
  mapfile -t files < <(find src tests bench fuzz tools apps -name '*.cc' -o -name '*.h')
fi
if ! out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
  named=$(grep -F 'clang-format-violations' <<<"$out" | cut -d: -f1 | sort -u || true)
  # A failure that names no file (a bad .clang-format, say) is shown as is.
  if [ -n "$named" ]; then
    sed 's/$/: not as clang-format writes it (clang-format -i FILE)/' <<<"$named"
  else
    echo "$out"
  fi
  exit 1
fi
echo "${#files[@]} files as clang-format writes them"
