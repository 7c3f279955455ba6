#!/usr/bin/env bash
# `gleaner slurm jobs --json` end to end with 1,000 Slurm jobs in squeue's
# answer (250 nodes of 8 GPUs, 4 jobs each; this host is node000), against a
# data directory a monitor filled: median of RUNS runs, the fake squeue's
# own time (printing the file) measured alone beside it.
#   bench/slurm_jobs.sh BUILD_DIR [RUNS]
set -euo pipefail
build=$(realpath "$1")
runs=${2:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir/squeue.json" <<'EOF'
import json, sys
jobs = []
for i in range(1000):
    node = "node%03d" % (i // 4)
    first = (i % 4) * 2
    jobs.append({"job_id": 1000 + i, "name": "train-%d" % i, "user_name": "user%d" % (i % 50),
                 "user_id": 2000 + i % 50, "account": "acct%d" % (i % 7), "partition": "gpu",
                 "qos": "normal", "job_state": "RUNNING", "state_reason": "None",
                 "start_time": 1764000000, "restart_cnt": 0, "exit_code": 0, "nodes": node,
                 "job_resources": {"allocated_nodes": [{"nodename": node}]},
                 "gres_detail": ["gpu:2(IDX:%d-%d)" % (first, first + 1)]})
json.dump({"meta": {"Slurm": {"version": {"major": 22, "minor": 5, "micro": 8}}},
           "errors": [], "jobs": jobs}, open(sys.argv[1], "w"))
EOF
printf '#!/bin/sh\nexec cat %s\n' "$dir/squeue.json" > "$dir/squeue"
chmod +x "$dir/squeue"
gpus=""
for i in $(seq 0 7); do
  gpus+="${gpus:+,}{\"name\": \"NVIDIA H100 80GB HBM3\", \"memory_total_mib\": 81920}"
done
echo "{\"name\": \"node000\", \"gpus\": [$gpus]}" > "$dir/scenario.json"
mkdir -p "$dir/data"
printf '[slurm]\nenabled = true\nnode = "node000"\nsqueue = "%s"\n' "$dir/squeue" \
  > "$dir/data/gleaner.toml"
"$build/gleaner" monitor --fake "$dir/scenario.json" --data-dir "$dir/data" --for 3 > /dev/null

median_ms() {
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    "$@" > /dev/null
    echo $((($(date +%s%N) - t0) / 1000))
  done | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)] / 1000}'
}
report=$(median_ms "$build/gleaner" slurm jobs --json --data-dir "$dir/data")
squeue=$(median_ms "$dir/squeue")
jobs=$("$build/gleaner" slurm jobs --json --data-dir "$dir/data" |
  python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')
echo "gleaner slurm jobs --json, 1000 jobs in Slurm, $jobs on this node: median ${report} ms" \
  "(the fake squeue alone: ${squeue} ms), $runs runs"
