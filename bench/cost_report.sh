#!/usr/bin/env bash
# Times `gleaner cost report` and `gleaner cost advise` (in-house timed by
# history) over a month of minutes of an 8-GPU host: 345,600 GPU minutes.
#   bench/cost_report.sh [BUILD_DIR]
# Prints each run's wall seconds and peak RSS, three runs each.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
gleaner="${1:-$here/build}/gleaner"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
"$gleaner" up --fake demo --data-dir "$data" --listen none --for 2 >/dev/null
python3 "$here/bench/fill_cost_history.py" "$data/gleaner.db" "$(date +%s)"
for run in 1 2 3; do
  /usr/bin/time -f "cost report --since 30d: %e s, %M KiB" \
    "$gleaner" --data-dir "$data" cost report --since 30d --json >/dev/null
done
for run in 1 2 3; do
  /usr/bin/time -f "cost advise (28 days of history): %e s, %M KiB" \
    "$gleaner" --data-dir "$data" cost advise --gpu H100-80GB --count 4 --hours 100 --json >/dev/null
done
