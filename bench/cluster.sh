#!/usr/bin/env bash
# Emulated agents against real coordinators (bench/agent_swarm.cc):
#   bench/cluster.sh [BUILD_DIR] [AGENTS] [SECONDS] [steady|failover|both] [SWARM_OPTION...]
# Runs, on a throwaway PostgreSQL (initdb and pg_ctl; as root they run as
# user postgres), two `gleaner-pg server`s, then:
#   1. AGENTS emulated 8-GPU agents reporting once a second while jobs are
#      submitted at 10 a second: joins/s, reports/s, report latency,
#      submit -> start p50/p99;
#   2. the same with the leader killed (kill -9) after a third of the run:
#      the longest an agent went without an answer, and when the standby
#      said it leads.
# Each prints the swarm's JSON, then what the leading coordinator spent
# while the swarm ran: CPU seconds per second (user + system, from
# /proc/PID/stat) and its peak resident memory (VmHWM). The servers' logs
# stay in the work dir.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-$here/build}"
agents="${2:-1000}"
seconds="${3:-40}"
which="${4:-both}"
shift $(($# < 4 ? $# : 4))
swarm_options=("$@")  # the rest goes to the swarm (--minutes 1)
server="$build/gleaner-pg"
[ -x "$server" ] || server="$build/gleaner"
swarm="$build/bench/agent_swarm"
work=$(mktemp -d)
chmod 755 "$work"
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
# Below the kernel's ephemeral range (32768 up), which the swarm's many connections use.
port=$((20000 + RANDOM % 12000))
mkdir -p "$work/pg"
[ "$(id -u)" -eq 0 ] && chown postgres "$work/pg"
as_pg "$pg_bin/initdb -D $work/pg/data -U postgres -A trust >/dev/null"
as_pg "$pg_bin/pg_ctl -D $work/pg/data -l $work/pg/log -w -o \"-p $port -k $work/pg -c listen_addresses=''\" start >/dev/null"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  as_pg "$pg_bin/pg_ctl -D $work/pg/data -m immediate stop >/dev/null" || true
  echo "work dir (servers' logs): $work" >&2
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || true
# shellcheck source=bench/swarm_tokens.sh
source "$here/bench/swarm_tokens.sh"
openssl rand -hex 32 > "$work/secret" && chmod 600 "$work/secret"

run() {  # run NAME keep|kill PORT_OFFSET
  local db="bench_$1"
  as_pg "$pg_bin/createdb -h $work/pg -p $port -U postgres $db"
  local uri="postgresql:///$db?host=$work/pg&port=$port&user=postgres"
  local p1=$((port + $3)) p2=$((port + $3 + 1))
  "$server" server --store "$uri" --listen "127.0.0.1:$p1" --join-secret-file "$work/secret" \
    --data-dir "$work/s1-$1" > "$work/server1-$1.log" 2>&1 &
  local leader=$!
  pids+=("$leader")
  sleep 1
  "$server" server --store "$uri" --listen "127.0.0.1:$p2" --join-secret-file "$work/secret" \
    --data-dir "$work/s2-$1" > "$work/server2-$1.log" 2>&1 &
  local standby=$!
  pids+=("$standby")
  sleep 1
  local token
  token=$(api_token "$build/gleaner" "$work/s1-$1")
  join_tokens "$build/gleaner" "$work/s1-$1" "$agents" > "$work/join-tokens-$1"
  if [ "$2" = kill ]; then
    ( sleep $((seconds / 3 + 5)); date +%s.%N > "$work/killed-at"; kill -9 "$leader" ) &
  fi
  local ticks_before started
  ticks_before=$(cpu_ticks "$leader")
  started=$(date +%s.%N)
  "$swarm" --server "http://127.0.0.1:$p1,http://127.0.0.1:$p2" --join-tokens "$work/join-tokens-$1" \
    --token "$token" --agents "$agents" --seconds "$seconds" --jobs-per-second 10 \
    "${swarm_options[@]}"
  if [ "$2" = kill ]; then
    echo "leader killed at $(date -u -d @"$(cat "$work/killed-at")" +%T.%N); standby: $(grep -m1 leading "$work/server2-$1.log")"
  else
    local ticks_after now
    ticks_after=$(cpu_ticks "$leader")
    now=$(date +%s.%N)
    awk -v t="$((ticks_after - ticks_before))" -v hz="$(getconf CLK_TCK)" -v s="$started" -v e="$now" \
      -v kb="$(awk '/VmHWM/ {print $2}' "/proc/$leader/status")" \
      'BEGIN { printf "leader: %.2f CPU-seconds per second (user + system), peak RSS %.0f MiB\n", t / hz / (e - s), kb / 1024 }'
  fi
  kill "$leader" "$standby" 2>/dev/null || true
  wait "$leader" "$standby" 2>/dev/null || true
}

# user + system clock ticks of process $1 (fields 14 and 15 of its stat,
# counted after the command name, which may hold spaces).
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

if [ "$which" != failover ]; then
  echo "== $agents agents, $seconds s, one leader and a standby"
  run steady keep 1
fi
if [ "$which" != steady ]; then
  echo "== the same, the leader killed after $((seconds / 3 + 5)) s"
  run failover kill 3
fi
