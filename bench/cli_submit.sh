#!/bin/sh
# Submits per second through the CLI: CLIENTS parallel loops, each running
# `gleaner submit` (a new process per job, as a user or a script would)
# against a running `gleaner up` in monitor mode (so no job starts and
# only submitting is measured). Prints one line: submits/s.
# Usage: bench/cli_submit.sh GLEANER_BINARY [CLIENTS] [PER_CLIENT]
set -eu
gleaner=$1
clients=${2:-8}
per_client=${3:-250}
dir=$(mktemp -d)
trap 'kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; rm -rf "$dir"' EXIT
"$gleaner" up --mode monitor --fake demo --listen none --data-dir "$dir" >"$dir/up.log" 2>&1 &
daemon=$!
while [ ! -S "$dir/gleaner.sock" ]; do sleep 0.05; done
start=$(date +%s.%N)
seq "$clients" | xargs -P "$clients" -I{} sh -c \
  "i=0; while [ \$i -lt $per_client ]; do \"$gleaner\" --data-dir \"$dir\" submit -- true >/dev/null || exit 1; i=\$((i+1)); done"
end=$(date +%s.%N)
echo "$clients $per_client $start $end" |
  awk '{ n = $1 * $2; s = $4 - $3; printf "%d clients, %d submits in %.2f s: %.0f submits/s\n", $1, n, s, n / s }'
