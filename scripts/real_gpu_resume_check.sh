#!/usr/bin/env bash
# Checks on a real NVIDIA GPU that a restarted `gleaner up` goes on from the
# minutes it stored: a holder judged held idle before the restart is held
# idle again on the first pass after it, where a daemon with no history
# watches for held_idle_after first. Writes what it saw.
#
#   sudo scripts/real_gpu_resume_check.sh GLEANER_BINARY OUT_DIR
#
# Needs GPU 0 free of other work and a python3 with PyTorch for the holder.
# Leaves nothing running.
set -uo pipefail
gleaner=$(realpath "$1")
out=$(realpath -m "$2")
py=$(command -v python3)
mkdir -p "$out"
work=$(mktemp -d /tmp/gleaner-resume.XXXX)
data="$work/data"
mkdir -m 0700 "$data"
report="$out/report.txt"
: >"$report"
t0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "[$(since "$t0") s] $*" | tee -a "$report"; }
cleanup() {
  touch "$work/holder.stop"
  [ -n "${up_pid:-}" ] && kill "$up_pid" 2>/dev/null
  sleep 1
  pkill -9 -f "$work/" 2>/dev/null
}
trap cleanup EXIT
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -e "$d/libnvidia-ml.so.1" ] && ! ldconfig -p | grep -q libnvidia-ml.so.1 &&
    export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
# The state GPU 0's verdict has, from the daemon's own view.
state0() { "$gleaner" --data-dir "$data" gpus --json 2>/dev/null | "$py" -c '
import json, sys
print(json.load(sys.stdin)["gpus"][0]["verdict"]["state"])' 2>/dev/null; }
# Seconds until GPU 0 reads STATE, or "never" within LIMIT seconds.
time_to() {
  local want=$1 limit=$2 start
  start=$(date +%s.%N)
  while [ "$(state0)" != "$want" ]; do
    if awk -v a="$start" -v b="$(date +%s.%N)" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
      echo never
      return
    fi
    sleep 0.1
  done
  since "$start"
}
up() {
  "$gleaner" up --data-dir "$data" --listen none --for "$1" >>"$out/up.log" 2>&1 &
  up_pid=$!
  while [ ! -S "$data/gleaner.sock" ]; do sleep 0.05; done
}

cat >"$work/holder.py" <<'EOF'
import os, sys, time, torch
x = torch.ones(1 << 28, device="cuda")  # 1 GiB held, nothing computed
torch.cuda.synchronize()
open(sys.argv[1] + "/holder.ready", "w").write(f"{os.getpid()}\n")
while not os.path.exists(sys.argv[1] + "/holder.stop"):
    time.sleep(0.5)
EOF
"$py" "$work/holder.py" "$work" >"$out/holder.log" 2>&1 &
while [ ! -e "$work/holder.ready" ]; do sleep 0.2; done
say "holder holds 1 GiB on GPU 0"
cat >"$data/gleaner.toml" <<'EOF'
[idle]
held_idle_after_s = 20
[colocation]
enabled = false
EOF

up 120
say "first daemon: held idle after $(time_to held_idle 60) s (held_idle_after 20 s)"
sleep 5
kill "$up_pid"
wait "$up_pid"
say "first daemon stopped: rc $?"
up 60
say "restarted daemon: held idle after $(time_to held_idle 60) s"
grep -E "resumed|restored|GPU 0 " "$out/up.log" | tail -4 | tee -a "$report"
kill "$up_pid"
wait "$up_pid"
# A kill loses the open minute: the restart still resumes within the gap.
up 60
sleep 3
kill -9 "$up_pid"
wait "$up_pid" 2>/dev/null
rm -f "$data/gleaner.sock"
up 60
say "after kill -9: held idle after $(time_to held_idle 60) s"
kill "$up_pid"
wait "$up_pid"
up_pid=
say "done"
