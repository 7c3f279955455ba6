#!/usr/bin/env bash
# The agents' transport, measured in one run against real coordinators
# (bench/agent_swarm.cc): AGENTS emulated 8-GPU agents report once a second
# while jobs are submitted at 10 a second, to a fresh `gleaner server`
# (SQLite store) for each way of talking:
#   1. a new connection per request, no long poll (how agents talked before)
#   2. connections kept open, long polls (how `gleaner agent` talks now)
#   3. the same over TLS
#   4. TLS with a new connection (and handshake) per request, no long poll
# Prints the swarm's JSON for each: submit -> start p50/p99, reports/s and
# their latency, HTTP bytes per agent per second, connections opened.
#   bench/transport.sh [BUILD_DIR] [AGENTS] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="${1:-$here/build}"
agents="${2:-2000}"
seconds="${3:-40}"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
ulimit -n 65536 2>/dev/null || true
# shellcheck source=bench/swarm_tokens.sh
source "$here/bench/swarm_tokens.sh"
openssl rand -hex 32 > "$work/secret" && chmod 600 "$work/secret"
# A throwaway CA and a certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench-ca \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=coordinator \
  -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > "$work/san"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
  -CAcreateserial -days 1 -extfile "$work/san" -out "$work/server.pem" 2>/dev/null

run() {  # run NAME http|https KEEP_ALIVE LONG_POLL
  local data="$work/$1" port=$((20000 + RANDOM % 12000)) tls=()  # below the ephemeral ports
  [ "$2" = https ] && tls=(--tls-cert "$work/server.pem" --tls-key "$work/server.key")
  "$build/gleaner" server --data-dir "$data" --listen "127.0.0.1:$port" \
    --join-secret-file "$work/secret" "${tls[@]}" > "$work/$1.log" 2>&1 &
  local server=$!
  pids+=("$server")
  sleep 1
  local token
  token=$(api_token "$build/gleaner" "$data")
  join_tokens "$build/gleaner" "$data" "$agents" > "$work/$1.join-tokens"
  echo "== $1: $2, keep-alive $3, long poll $4"
  "$build/bench/agent_swarm" --server "$2://127.0.0.1:$port" --ca-file "$work/ca.pem" \
    --join-tokens "$work/$1.join-tokens" --token "$token" --agents "$agents" \
    --seconds "$seconds" --jobs-per-second 10 --keep-alive "$3" --long-poll "$4"
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}

run before http 0 0
run after http 1 1
run after-tls https 1 1
run tls-no-keep-alive https 0 0
