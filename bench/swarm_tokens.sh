# Sourced by bench/cluster.sh and bench/transport.sh: the tokens an
# emulated swarm needs from a coordinator whose data directory is given.

# api_token GLEANER DATA_DIR: an API token. Root may hold none, so as root
# it is nobody's (the swarm's jobs run nowhere).
api_token() {
  local user=()
  [ "$(id -u)" -eq 0 ] && user=(--user nobody)
  "$1" --data-dir "$2" token create "${user[@]}" | tail -1
}

# join_tokens GLEANER DATA_DIR AGENTS: one join token a line, for emu-0,
# emu-1, ... in order (made four at a time, each into a file of its own).
join_tokens() {
  local dir
  dir=$(mktemp -d)
  seq 0 $(($3 - 1)) | xargs -P 4 -I{} sh -c \
    '"$1" --data-dir "$2" agent-token create --host "emu-$3" --json > "$4/$3"' _ "$1" "$2" {} "$dir"
  seq 0 $(($3 - 1)) | sed "s|^|$dir/|" | xargs cat |
    sed -n 's/.*"token": "\(gjt_[0-9a-f]*\)".*/\1/p'
  rm -rf "$dir"
}
