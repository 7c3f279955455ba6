#!/usr/bin/env bash
# A whole Slurm cluster on this host, for tests: munged, slurmctld, one
# slurmd with fake GPU device files, and slurmrestd with JWT, all state in
# one directory. Needs root (slurmd runs jobs as their users) and Debian's
# slurmctld slurmd slurm-client slurmrestd munge packages.
#
#   local_slurm.sh start DIR GPUS   start it; DIR/env then holds the
#                                   variables a client needs (SLURM_CONF,
#                                   GLEANER_SLURMRESTD, ...)
#   local_slurm.sh stop DIR         stop every daemon it started (by pid)
#
# Two partitions share the node: `scavenger` (PriorityTier=1, requeued when
# preempted) and `high` (PriorityTier=10, never preempted), as a site that
# lends through Slurm sets them up (docs/slurm.md).
set -euo pipefail

free_port() {
  python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])
EOF
}

wait_for() {  # wait_for SECONDS COMMAND...: polls every 0.1 s
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then return 1; fi
    sleep 0.1
  done
}

stop_pid_file() {
  local f=$1
  [[ -s $f ]] || return 0
  local pid; pid=$(cat "$f")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
}

cmd_stop() {
  local dir=$1
  # slurmd first, so no job step is left running under a dead controller.
  for d in slurmrestd slurmd slurmctld munged; do stop_pid_file "$dir/$d.pid"; done
  # Job steps slurmd started (sleep and the like) die with their slurmstepd.
  pkill -f "slurmstepd.*$dir" 2>/dev/null || true
}

cmd_start() {
  local dir=$1 gpus=${2:-4}
  [[ $(id -u) == 0 ]] || { echo "local_slurm.sh: needs root (slurmd runs jobs as their users)" >&2; exit 2; }
  for p in slurmctld slurmd munged scontrol slurmrestd; do
    command -v "$p" >/dev/null || [[ -x /usr/sbin/$p ]] || {
      echo "local_slurm.sh: $p is not installed (apt-get install slurmctld slurmd slurm-client slurmrestd slurm-wlm-jwt-plugin munge)" >&2
      exit 3
    }
  done
  # slurmrestd's tokens need the JWT plugin, a package of its own.
  compgen -G "/usr/lib/*/slurm-wlm/auth_jwt.so" >/dev/null || {
    echo "local_slurm.sh: Slurm's JWT plugin is not installed (apt-get install slurm-wlm-jwt-plugin)" >&2
    exit 3
  }
  export PATH=$PATH:/usr/sbin
  mkdir -p "$dir"/{munge,state,spool,dev,log}
  chmod 755 "$dir"

  # munge: its own key and socket, owned by munge.
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chown -R munge:munge "$dir/munge"
  chmod 700 "$dir/munge"; chmod 400 "$dir/munge/munge.key"
  mkdir -p "$dir/munge-run"; chown munge:munge "$dir/munge-run"; chmod 755 "$dir/munge-run"
  runuser -u munge -- munged --key-file="$dir/munge/munge.key" --socket="$dir/munge-run/munge.sock" \
    --pid-file="$dir/munge-run/munged.pid" --log-file="$dir/munge-run/munged.log" --seed-file="$dir/munge/seed" \
    --force
  wait_for 5 test -S "$dir/munge-run/munge.sock"
  cp "$dir/munge-run/munged.pid" "$dir/munged.pid"

  # Fake GPUs: character devices (slurmd refuses plain files), clones of /dev/null.
  local last=$((gpus - 1))
  for i in $(seq 0 "$last"); do mknod -m 666 "$dir/dev/nvidia$i" c 1 3; done

  head -c 32 /dev/urandom > "$dir/jwt.key"; chmod 600 "$dir/jwt.key"
  local node; node=$(hostname -s)
  local ctld_port; ctld_port=$(free_port)
  local slurmd_port; slurmd_port=$(free_port)
  local rest_port; rest_port=$(free_port)
  local cpus; cpus=$(nproc)
  cat > "$dir/slurm.conf" <<EOF
ClusterName=gleanertest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$dir/munge-run/munge.sock
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$dir/jwt.key
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
JobRequeue=1
ReturnToService=2
SchedulerParameters=defer_batch=0
MinJobAge=60
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus Gres=gpu:$gpus State=UNKNOWN
PartitionName=scavenger Nodes=$node Default=YES PriorityTier=1 PreemptMode=REQUEUE MaxTime=INFINITE State=UP OverSubscribe=NO
PartitionName=high Nodes=$node PriorityTier=10 PreemptMode=OFF MaxTime=INFINITE State=UP
EOF
  cat > "$dir/gres.conf" <<EOF
AutoDetect=off
NodeName=$node Name=gpu File=$dir/dev/nvidia[0-$last]
EOF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$dir/slurm.conf" -i
  wait_for 10 scontrol ping
  slurmd -f "$dir/slurm.conf" -N "$node"
  wait_for 10 bash -c "sinfo -h -N -o %T | grep -qx idle"

  # slurmrestd refuses root and SlurmUser; it runs as nobody, reading the
  # configuration (not the keys) as that user.
  chmod 644 "$dir/slurm.conf" "$dir/gres.conf"
  (SLURM_JWT=daemon setsid slurmrestd -f "$dir/slurm.conf" -u nobody -g nogroup -a rest_auth/jwt \
     -s openapi/v0.0.38 "127.0.0.1:$rest_port" > "$dir/log/slurmrestd.log" 2>&1 < /dev/null &
   echo $! > "$dir/slurmrestd.pid")
  wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$rest_port"

  cat > "$dir/env" <<EOF
SLURM_CONF=$dir/slurm.conf
GLEANER_SLURM_NODE=$node
GLEANER_SLURMRESTD=http://127.0.0.1:$rest_port
EOF
}

case ${1:-} in
  start) cmd_start "$2" "${3:-4}" ;;
  stop) cmd_stop "$2" ;;
  *) echo "usage: local_slurm.sh start DIR [GPUS] | stop DIR" >&2; exit 2 ;;
esac
