#!/usr/bin/env bash
# What one agent of an 8-GPU host (the demo scenario, with a job running)
# sends to its coordinator: in a network namespace of its own (root; so that
# nothing else shares its loopback), a `gleaner server` and one `gleaner
# agent --fake demo` run for a while; the loopback's counters give the bytes
# on the wire (IP and TCP framing included), and
# the requests' own bytes are counted from the agent's reports.
#   bench/agent_bandwidth.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-$here/build}"
seconds="${2:-120}"
[ "$(id -u)" -eq 0 ] || { echo "run as root (unshare -n)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
openssl rand -hex 32 > "$work/secret" && chmod 600 "$work/secret"
unshare -n bash -s "$build" "$work" "$seconds" <<'INNER'
set -euo pipefail
build=$1 work=$2 seconds=$3
ip link set lo up
"$build/gleaner" server --data-dir "$work/s" --listen 127.0.0.1:7380 \
  --join-secret-file "$work/secret" > "$work/server.log" 2>&1 &
server=$!
sleep 1
"$build/gleaner" --data-dir "$work/s" agent-token create --host gpu-node-07 | sed -n 2p \
  > "$work/join.token" && chmod 600 "$work/join.token"
"$build/gleaner" agent --server http://127.0.0.1:7380 --join-token-file "$work/join.token" \
  --name gpu-node-07 --fake demo --data-dir "$work/a" > "$work/agent.log" 2>&1 &
agent=$!
sleep 2
token=$("$build/gleaner" --data-dir "$work/s" token create $([ "$(id -u)" -eq 0 ] && echo --user nobody) | tail -1)
"$build/gleaner" --server http://127.0.0.1:7380 --token "$token" submit --gpus 2 -- sleep $((seconds + 20)) >/dev/null
sleep 10  # joined, the job started: the steady state from here
bytes() { awk '/ lo:/ {print $2, $3}' /proc/net/dev; }
read -r rx0 pk0 < <(bytes)
sleep "$seconds"
read -r rx1 pk1 < <(bytes)
kill "$agent" "$server"
echo "one 8-GPU agent, one job, ${seconds} s: $(( (rx1 - rx0) / seconds )) bytes/s on the wire, both directions, $(( (pk1 - pk0) / seconds )) packets/s"
INNER
