#!/usr/bin/env bash
# Starts a real one-node Slurm cluster on this machine (Debian 12, as root, without systemd):
# munged, slurmctld and slurmd, with one partition `debug` holding this host.
#
#   tools/ci/slurm-up.sh [--session FILE]
#
# Idempotent: installs slurm-wlm and munge with apt-get only when they are missing, and does
# nothing when the cluster it started earlier is still answering. With --session FILE, FILE is
# written only when this call started the daemons, so a matching `slurm-down.sh --session FILE`
# stops only what this call started (CTest fixtures use this; a cluster started by hand is kept).
#
# Environment:
#   ATTUNE_SLURM_DIR   state, spool, logs and pid files (default /tmp/attune-slurm)
#   ATTUNE_SLURM_WAIT  seconds to wait for the node to become idle (default 60)
#
# Exit status: 0 cluster up; 1 it could not be started (the reason is printed on stderr).
set -euo pipefail

DIR="${ATTUNE_SLURM_DIR:-/tmp/attune-slurm}"
WAIT_S="${ATTUNE_SLURM_WAIT:-60}"
CONF=/etc/slurm/slurm.conf
MARK="# written by attune tools/ci/slurm-up.sh"
SESSION=""
if [[ "${1:-}" == "--session" ]]; then SESSION="${2:?--session needs a file}"; fi

say() { echo "slurm-up: $*" >&2; }
die() { say "$*"; exit 1; }

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
     command -v sbatch >/dev/null && command -v munged >/dev/null; then
    return
  fi
  [[ $(id -u) == 0 ]] || die "slurm-wlm is not installed and we are not root to install it"
  say "installing slurm-wlm and munge (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null || die "apt-get update failed"
  apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null ||
    die "apt-get install slurm-wlm munge failed"
}

alive() { [[ -s "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_munge() {
  if alive "$DIR/munged.pid"; then return; fi
  mkdir -p /run/munge /var/lib/munge /var/log/munge /etc/munge
  if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey --create --keyfile=/etc/munge/munge.key >/dev/null || die "cannot create the munge key"
  fi
  chown -R munge:munge /run/munge /var/lib/munge /var/log/munge /etc/munge
  chmod 0700 /etc/munge && chmod 0600 /etc/munge/munge.key
  # munged forks into the background and writes its pid file itself.
  daemon runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid ||
    die "munged did not start (see /var/log/munge/munged.log)"
  cp /run/munge/munged.pid "$DIR/munged.pid"
  munge -n | unmunge >/dev/null || die "munge round trip failed after starting munged"
}

write_conf() {
  if [[ -e "$CONF" ]] && ! grep -qF "$MARK" "$CONF"; then
    die "$CONF exists and was not written by this script; move it away to use the test cluster"
  fi
  local host node
  host="$(hostname -s)"
  # `slurmd -C` prints this host's real CPUs/sockets/memory; keep its first line (NodeName=...).
  node="$(slurmd -C | head -n1)"
  [[ "$node" == NodeName=* ]] || die "slurmd -C printed no NodeName line: $node"
  mkdir -p /etc/slurm "$DIR/ctld" "$DIR/spool"
  cat >"$CONF" <<EOF
$MARK (state in $DIR); slurm-down.sh stops it.
ClusterName=attune
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/ctld
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
ReturnToService=2
SlurmdTimeout=30
SlurmctldTimeout=30
MessageTimeout=10
InactiveLimit=0
KillWait=5
MinJobAge=300
EnforcePartLimits=ALL
$node State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=60 State=UP
EOF
}

cluster_answers() { timeout 10 sinfo -h >/dev/null 2>&1; }

# Daemons get no inherited descriptors: the lock (fd 9) or a caller's pipe kept open by a daemon
# would block the next slurm-up.sh or a caller waiting for our output to end.
daemon() { "$@" </dev/null >/dev/null 2>&1 9>&-; }

start_daemons() {
  alive "$DIR/slurmctld.pid" || daemon /usr/sbin/slurmctld -i || die "slurmctld did not start: $DIR/slurmctld.log"
  alive "$DIR/slurmd.pid" || daemon /usr/sbin/slurmd || die "slurmd did not start: $DIR/slurmd.log"
}

wait_idle() {
  local host state="" deadline=$((SECONDS + WAIT_S))
  host="$(hostname -s)"
  while ((SECONDS < deadline)); do
    state="$(timeout 10 sinfo -h -n "$host" -o %T 2>/dev/null || true)"
    case "$state" in
      idle* | mixed* | allocated*) return 0 ;;
      down* | drain*) scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true ;;
    esac
    sleep 1
  done
  die "node $host is not idle after ${WAIT_S}s (state '${state:-no answer}'); see $DIR/slurmctld.log"
}

main() {
  mkdir -p "$DIR"
  exec 9>"$DIR/.lock"
  flock 9
  install_packages
  if alive "$DIR/slurmctld.pid" && alive "$DIR/slurmd.pid" && cluster_answers; then
    say "already up (state in $DIR)"
    return
  fi
  start_munge
  write_conf
  start_daemons
  wait_idle
  [[ -n "$SESSION" ]] && echo "$DIR" >"$SESSION"
  say "up: partition debug on $(hostname -s) (state in $DIR)"
}

main
