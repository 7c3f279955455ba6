#!/usr/bin/env bash
# gleaner beside a real Slurm on this host (tests/testing/local_slurm.sh):
#  1. bridge mode: from a job submitted to `gleaner up` onto GPUs already
#     judged idle to its Slurm job RUNNING in the scavenger partition, RUNS
#     times (median and worst);
#  2. what asking Slurm costs: `squeue --json` and slurmrestd's job list,
#     each 20 times, with JOBS jobs held in Slurm's queue (median wall time
#     per call, and that cost per host per second at the default 30 s poll).
# Needs root and Slurm's packages (docs/slurm.md).
#   bench/slurm_bridge.sh BUILD_DIR [RUNS] [JOBS]
set -euo pipefail
build=$(realpath "$1")
runs=${2:-20}
jobs=${3:-1000}
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
chmod 711 "$dir"
up_pid=""
cleanup() {
  [[ -n $up_pid ]] && kill "$up_pid" 2>/dev/null && wait "$up_pid" 2>/dev/null
  bash tests/testing/local_slurm.sh stop "$dir/slurm"
  rm -rf "$dir"
}
trap cleanup EXIT
bash tests/testing/local_slurm.sh start "$dir/slurm" 8
set -a; source "$dir/slurm/env"; set +a
export PATH=$PATH:/usr/sbin

gpus=""
for i in $(seq 0 7); do
  gpus+="${gpus:+,}{\"name\": \"NVIDIA H100 80GB HBM3\", \"memory_total_mib\": 81920}"
done
echo "{\"name\": \"slurm-node\", \"gpus\": [$gpus]}" > "$dir/scenario.json"
cat > "$dir/gleaner.toml" <<EOF
[sampling]
interval_s = 1
[idle]
idle_after_s = 1
[slurm]
enabled = true
conf = "$SLURM_CONF"
node = "$GLEANER_SLURM_NODE"
poll_interval_s = 1
idle_alerts = false
bridge = true
bridge_partition = "scavenger"
EOF
"$build/gleaner" up --fake "$dir/scenario.json" --data-dir "$dir/state" \
  --config "$dir/gleaner.toml" > "$dir/up.log" 2>&1 &
up_pid=$!
until [[ -S $dir/state/gleaner.sock ]]; do sleep 0.1; done
sleep 3  # the GPUs are judged idle

now_ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
worst() { sort -n | tail -1; }

: > "$dir/latency"; : > "$dir/submitted"; : > "$dir/in_slurm"
for _ in $(seq "$runs"); do
  t0=$(now_ms)
  id=$("$build/gleaner" --data-dir "$dir/state" submit -- sleep 600 | awk '{print $3}')
  until squeue -h -n "gleaner-$id" | grep -q .; do sleep 0.005; done
  t1=$(now_ms)
  until squeue -h -t RUNNING -n "gleaner-$id" | grep -q .; do sleep 0.005; done
  t2=$(now_ms)
  echo $((t2 - t0)) >> "$dir/latency"
  echo $((t1 - t0)) >> "$dir/submitted"
  echo $((t2 - t1)) >> "$dir/in_slurm"
  "$build/gleaner" --data-dir "$dir/state" cancel "$id" > /dev/null
  until ! squeue -h -n "gleaner-$id" -t RUNNING,COMPLETING | grep -q .; do sleep 0.05; done
done
echo "bridge: submit onto idle GPUs to Slurm RUNNING, $runs runs:" \
  "median $(median < "$dir/latency") ms, worst $(worst < "$dir/latency") ms;" \
  "of which gleaner placing and sbatch: median $(median < "$dir/submitted") ms," \
  "worst $(worst < "$dir/submitted") ms; Slurm starting it: median" \
  "$(median < "$dir/in_slurm") ms, worst $(worst < "$dir/in_slurm") ms"

# A queue of held jobs, for squeue and slurmrestd to list.
for _ in $(seq "$jobs"); do sbatch --hold -p high -o /dev/null --wrap true > /dev/null; done
token=$(scontrol token username=root lifespan=600 | cut -d= -f2)
time_calls() {  # prints each call's wall time in ms
  for _ in $(seq 20); do
    t0=$(date +%s%N)
    "$@" > /dev/null
    echo $((($(date +%s%N) - t0) / 1000))
  done | awk '{printf "%.1f\n", $1 / 1000}'
}
squeue_ms=$(time_calls squeue --json | median)
rest_ms=$(time_calls curl -sf -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $token" \
  "$GLEANER_SLURMRESTD/slurm/v0.0.38/jobs" | median)
echo "polling with $(squeue -h | wc -l) jobs in Slurm: squeue --json median ${squeue_ms} ms," \
  "slurmrestd jobs median ${rest_ms} ms per call;" \
  "at one call per 30 s: $(awk -v a="$squeue_ms" 'BEGIN {printf "%.2f", a / 30}') ms" \
  "and $(awk -v a="$rest_ms" 'BEGIN {printf "%.2f", a / 30}') ms per host per second"
