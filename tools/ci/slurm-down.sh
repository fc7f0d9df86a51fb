#!/usr/bin/env bash
# Stops the one-node Slurm cluster that tools/ci/slurm-up.sh started, by the pids it recorded.
#
#   tools/ci/slurm-down.sh [--session FILE]
#
# With --session FILE, stops only when FILE exists (slurm-up.sh wrote it because that call
# started the daemons) and removes FILE. Without it, always stops. Jobs still queued are lost.
set -uo pipefail

DIR="${ATTUNE_SLURM_DIR:-/tmp/attune-slurm}"
if [[ "${1:-}" == "--session" ]]; then
  SESSION="${2:?--session needs a file}"
  [[ -e "$SESSION" ]] || { echo "slurm-down: not started by this session; left running" >&2; exit 0; }
  rm -f "$SESSION"
fi

# Sends TERM, waits up to 10 s, then KILL; only to the pid in the given file.
stop() {
  local file="$1" pid
  [[ -s "$file" ]] || return 0
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  fi
  rm -f "$file"
}

[[ -d "$DIR" ]] || exit 0
exec 9>"$DIR/.lock"
flock 9
stop "$DIR/slurmd.pid"
stop "$DIR/slurmctld.pid"
stop "$DIR/munged.pid"
echo "slurm-down: stopped (state in $DIR)" >&2
