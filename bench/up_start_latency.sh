#!/bin/bash
# Submit to start on `gleaner up` (the demo's simulated GPUs, the default
# 1 s sampling interval): N jobs submitted one at a time at random moments
# 1.1-1.9 s apart, so they fall anywhere within a pass; prints the median
# and p99 of started_at - submitted_at from the store. Figures:
# docs/benchmarks.md.
#   bench/up_start_latency.sh BINARY [N]
set -euo pipefail
bin=$1
n=${2:-40}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" up --fake demo --listen none --data-dir "$dir/state" --for 300 >"$dir/up.log" 2>&1 &
up=$!
for _ in $(seq 1 100); do
  grep -q "API on" "$dir/up.log" 2>/dev/null && break
  sleep 0.1
done
for _ in $(seq 1 "$n"); do
  "$bin" --data-dir "$dir/state" submit -- true >/dev/null
  sleep "1.$((RANDOM % 9 + 1))"
done
sleep 2
"$bin" --data-dir "$dir/state" queue --all --json >"$dir/jobs.json"
kill "$up"
wait "$up" 2>/dev/null || true
python3 - "$dir/jobs.json" <<'PY'
import datetime, json, sys
def at(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
jobs = json.load(open(sys.argv[1]))["jobs"]
waits = sorted(at(j["started_at"]) - at(j["submitted_at"]) for j in jobs if j["started_at"])
n = len(waits)
print(f"{n} of {len(jobs)} started; submit to start p50 {waits[n // 2]:.3f} s, "
      f"p99 {waits[min(n - 1, n * 99 // 100)]:.3f} s, max {waits[-1]:.3f} s")
PY
