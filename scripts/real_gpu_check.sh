#!/usr/bin/env bash
# Checks gleaner against a real NVIDIA GPU, end to end, and writes what it
# saw: NVML read through the real driver, a holder's process attributed to
# its user, the holder parked with the CUDA checkpoint API while a job
# borrows its GPU, the holder restored with its memory intact, and a job
# vacated when the GPU's owner returns. Each step's time is measured.
#
#   sudo scripts/real_gpu_check.sh GLEANER_BINARY OUT_DIR [HOLDER_GIB]
#
# Needs root (parking acts on another user's process; jobs run as their
# submitter), GPU 0 free of other work, and a python3 with PyTorch for the
# holder, the job and the owner. Leaves nothing running.
set -uo pipefail
gleaner=$(realpath "$1")
out=$(realpath -m "$2")
holder_gib=${3:-40}
py=$(command -v python3)
mkdir -p "$out"
work=$(mktemp -d /tmp/gleaner-real.XXXX)
data="$work/data"
mkdir -m 0700 "$data"
mkdir "$work/h"  # the holder's, apart from the config's directory
report="$out/report.txt"
: >"$report"
t0=$(date +%s.%N)
# Seconds since FROM, to a tenth.
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "[$(since "$t0") s] $*" | tee -a "$report"; }
g() { "$gleaner" --data-dir "$data" "$@"; }
# wait_for SECONDS DESCRIPTION COMMAND...: polls every 0.2 s.
wait_for() {
  local limit=$1 what=$2 start
  shift 2
  start=$(date +%s.%N)
  while ! "$@" >/dev/null 2>&1; do
    if awk -v a="$start" -v b="$(date +%s.%N)" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
      say "TIMEOUT after ${limit}s waiting for: $what"
      collect
      exit 1
    fi
    sleep 0.2
  done
  say "$what (after $(since "$start") s)"
}
# What the daemon recorded, also after a step that timed out.
collect() {
  g show 1 --events >"$out/job-events.txt" 2>&1
  g events --json >"$out/events.json" 2>&1
  # Through the API socket, which knows root by its credentials.
  "$py" -c "
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'GET /metrics?dcgm=1 HTTP/1.1\\r\\nHost: gleaner\\r\\nConnection: close\\r\\n\\r\\n')
got = b''
while chunk := s.recv(65536):
    got += chunk
print(got.decode())" "$data/gleaner.sock" >"$out/metrics.txt" 2>&1
  cp "$data/logs/1.out" "$out/job.out" 2>/dev/null
  cp "$data/logs/1.err" "$out/job.err" 2>/dev/null
  g cancel 1 >/dev/null 2>&1
  if [ -n "${up_pid:-}" ]; then
    kill "$up_pid"
    wait "$up_pid"
    say "gleaner up exited: rc $?"
    up_pid=
  fi
}
snapshot() { g gpus --json >"$out/gpus-$1.json" 2>>"$out/errors.log"; }
cleanup() {
  touch "$work/h/holder.stop"
  [ -n "${up_pid:-}" ] && kill "$up_pid" 2>/dev/null
  pkill -f "$work/" 2>/dev/null
  sleep 1
  pkill -9 -f "$work/" 2>/dev/null
  # Only the user this script made: never one that was there before.
  [ -n "${made_user:-}" ] && userdel gleaner-holder 2>/dev/null
}
trap cleanup EXIT

# The driver's libraries where the loader would not find them (a container
# mounting the driver beside the system).
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -e "$d/libnvidia-ml.so.1" ] && ! ldconfig -p | grep -q libnvidia-ml.so.1 &&
    export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
job_env=()
[ -n "${LD_LIBRARY_PATH:-}" ] && job_env=(--env "LD_LIBRARY_PATH=$LD_LIBRARY_PATH")

say "host: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
nvidia-smi --query-gpu=name,driver_version,memory.total,persistence_mode,mig.mode.current \
  --format=csv,noheader 2>&1 | tee -a "$report"
nvidia-smi -q -x >"$out/nvidia-smi-q.xml" 2>&1
stat -fc 'cgroup file system: %T' /sys/fs/cgroup | tee -a "$report"

# 1. NVML through the real loader, nothing running.
start=$(date +%s%N)
"$gleaner" gpus --json >"$out/gpus-empty.json" 2>"$out/gpus-empty.err"
say "gleaner gpus --json: rc $? in $((($(date +%s%N) - start) / 1000000)) ms"
"$gleaner" gpus >>"$report" 2>&1

# The holder: a user's forgotten notebook, memory filled with a pattern.
cat >"$work/h/holder.py" <<'EOF'
import os, sys, time, torch
gib, work = float(sys.argv[1]), sys.argv[2]
n = int(gib * (1 << 30)) // 8
x = torch.arange(n, device="cuda", dtype=torch.int64) % 1000003
want = int(x.sum().item())
torch.cuda.synchronize()
open(f"{work}/holder.ready", "w").write(f"{os.getpid()} {time.time():.3f}\n")
while not os.path.exists(f"{work}/holder.stop"):
    if os.path.exists(f"{work}/holder.verify"):
        os.unlink(f"{work}/holder.verify")
        t = time.time()
        got = int(x.sum().item())
        with open(f"{work}/holder.result", "a") as f:
            f.write(f"{'intact' if got == want else 'CHANGED'} {got} {want} "
                    f"checked in {time.time() - t:.3f}s\n")
    time.sleep(0.5)
EOF
# The job: reports its GPU, computes, leaves on its checkpoint signal.
cat >"$work/job.py" <<'EOF'
import os, signal, sys, time, torch
leave = []
signal.signal(signal.SIGTERM, lambda *_: leave.append(time.time()))
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
print(f"started {time.time():.3f} CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')} "
      f"on {torch.cuda.get_device_name(0)} as uid {os.getuid()}", flush=True)
end = time.time() + float(sys.argv[1])
while not leave and time.time() < end:
    for _ in range(20):
        x = (x @ x).clamp_(-1, 1)
    torch.cuda.synchronize()
if leave:
    print(f"signal {leave[0]:.3f} left {time.time():.3f}", flush=True)
EOF
# The owner: comes back and computes.
cat >"$work/owner.py" <<'EOF'
import sys, time, torch
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
print(f"owner computing {time.time():.3f}", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    x = (x @ x).clamp_(-1, 1)
    torch.cuda.synchronize()
EOF
chmod 0755 "$work"
chmod 0644 "$work"/*.py

# The holder runs as a user of its own where one can be made.
run_holder=()
useradd -M -s /usr/sbin/nologin gleaner-holder 2>/dev/null && made_user=1
if [ -n "${made_user:-}" ] &&
  runuser -u gleaner-holder -- "$py" -c 'import torch' 2>/dev/null; then
  run_holder=(runuser -u gleaner-holder --)
  chown gleaner-holder "$work/h"
fi
"${run_holder[@]}" "$py" "$work/h/holder.py" "$holder_gib" "$work/h" >"$out/holder.log" 2>&1 &
wait_for 120 "holder holds ${holder_gib} GiB as $([ ${#run_holder[@]} -gt 0 ] && echo gleaner-holder || echo root)" \
  test -e "$work/h/holder.ready"
holder_pid=$(cut -d' ' -f1 "$work/h/holder.ready")
snapshot holder

cat >"$data/gleaner.toml" <<'EOF'
[idle]
idle_after_s = 5
held_idle_after_s = 5
[colocation]
enabled = false
[parking]
enabled = true
park_idle_timeout_s = 60   # the least allowed
notice_s = 0
max_park_s = 0
EOF
"$gleaner" up --data-dir "$data" --listen 127.0.0.1:7391 --for 600 >"$out/up.log" 2>&1 &
up_pid=$!
wait_for 20 "gleaner up answers" test -S "$data/gleaner.sock"
g submit --gpus 1 --grace 15 "${job_env[@]}" -- "$py" "$work/job.py" 600 >>"$report" 2>&1
wait_for 30 "holder judged held idle" sh -c "'$gleaner' --data-dir '$data' gpus --json | grep -q '\"held_idle\"'"
snapshot held-idle

# 2. Parking: the held GPU is lent whole once its holder is parked. The
# daemon goes on sampling while the driver copies.
wait_for 120 "parking under way" grep -q "moving to host memory" "$out/up.log"
sleep 2  # the passes after the park began
snapshot parking
grep -o '"reason": "[^"]*being parked[^"]*"' "$out/gpus-parking.json" | tee -a "$report"
wait_for 120 "holder parked" grep -q "^.*parked process $holder_pid" "$out/up.log"
grep "parked process" "$out/up.log" | tee -a "$report"
nvidia-smi --query-gpu=memory.used --format=csv,noheader | sed 's/^/GPU memory used while parked: /' | tee -a "$report"
wait_for 60 "job started on the parked holder's GPU" grep -q started "$data/logs/1.out"
grep started "$data/logs/1.out" | tee -a "$report"
sleep 8
snapshot lent

# 3. Restore on request: the job leaves first, then the holder comes back.
unpark_at=$(date +%s.%N)
g unpark 0 >>"$report" 2>&1
wait_for 90 "holder restored" grep -q "process $holder_pid.* restored:" "$out/up.log"
grep -E "restoring|restored:" "$out/up.log" | tee -a "$report"
grep signal "$data/logs/1.out" | tee -a "$report"
say "unpark asked at $unpark_at"
touch "$work/h/holder.verify"
wait_for 60 "holder checked its memory" test -s "$work/h/holder.result"
cat "$work/h/holder.result" | tee -a "$report"
snapshot restored

# 4. The owner returns to a lent GPU: the holder leaves, the job comes back
# on the empty GPU, then the owner's process arrives beside it.
touch "$work/h/holder.stop"
wait_for 60 "job started again on the empty GPU" sh -c "[ \$(grep -c started '$data/logs/1.out') -ge 2 ]"
sleep 5
"${run_holder[@]}" "$py" "$work/owner.py" 40 >"$out/owner.log" 2>&1 &
wait_for 60 "job left for the owner" sh -c "[ \$(grep -c signal '$data/logs/1.out') -ge 2 ]"
cat "$out/owner.log" | tee -a "$report"
grep signal "$data/logs/1.out" | tail -1 | tee -a "$report"
owner_at=$(grep -o 'computing [0-9.]*' "$out/owner.log" | cut -d' ' -f2)
signal_at=$(grep signal "$data/logs/1.out" | tail -1 | cut -d' ' -f2)
[ -n "$owner_at" ] && [ -n "$signal_at" ] &&
  say "owner's first kernel -> job's checkpoint signal: $(awk -v a="$owner_at" -v b="$signal_at" 'BEGIN { printf "%.2f", b - a }') s"
snapshot owner

collect
say "done"
