#!/bin/sh
# Submits per second through a command line: CLIENTS parallel loops, each
# running the submit command PER_CLIENT times (a new process per job, as a
# user or a script would). The same harness measures
#   gleaner: `gleaner submit -- true` against a `gleaner up --mode monitor
#            --fake demo` it starts (no job starts: only submitting counts);
#   sbatch:  `sbatch --hold --wrap true` against a Slurm already running on
#            this host (held: nothing runs); its jobs (by name) are
#            cancelled after;
#   noop:    `true`, the ceiling the loop and process starts allow here.
# Prints one line with the rate.
# Usage: bench/cli_submit.sh gleaner GLEANER_BINARY [CLIENTS] [PER_CLIENT]
#        bench/cli_submit.sh sbatch|noop [CLIENTS] [PER_CLIENT]
set -eu
mode=$1
shift
case $mode in
  gleaner)
    gleaner=$1
    shift
    dir=$(mktemp -d)
    "$gleaner" up --mode monitor --fake demo --listen none --data-dir "$dir" >"$dir/up.log" 2>&1 &
    daemon=$!
    trap 'kill "$daemon" 2>/dev/null; wait "$daemon" 2>/dev/null; rm -rf "$dir"' EXIT
    while [ ! -S "$dir/gleaner.sock" ]; do sleep 0.05; done
    submit="\"$gleaner\" --data-dir \"$dir\" submit -- true"
    ;;
  sbatch)
    command -v sbatch >/dev/null || { echo "no sbatch: install and start Slurm first" >&2; exit 1; }
    name="gleaner-bench-$$"
    trap 'scancel --name "$name" 2>/dev/null || true' EXIT
    submit="sbatch --hold --job-name $name --wrap true"
    ;;
  noop)
    submit=/bin/true
    ;;
  *)
    echo "usage: $0 gleaner BINARY [CLIENTS] [PER_CLIENT] | sbatch|noop [CLIENTS] [PER_CLIENT]" >&2
    exit 2
    ;;
esac
clients=${1:-8}
per_client=${2:-250}
start=$(date +%s.%N)
seq "$clients" | xargs -P "$clients" -I{} sh -c \
  "i=0; while [ \$i -lt $per_client ]; do $submit >/dev/null || exit 1; i=\$((i+1)); done"
end=$(date +%s.%N)
echo "$mode $clients $per_client $start $end" |
  awk '{ n = $2 * $3; s = $5 - $4; printf "%s: %d clients, %d submits in %.2f s: %.0f submits/s\n", $1, $2, n, s, n / s }'
