// Copyright attune authors.
#include "importer/capture_stub.h"

namespace attune::importer {

// The stub: records the call as three files named by the time in nanoseconds and its pid, so that a
// listing sorts in call order: <stamp>.argv (NUL-separated), <stamp>.env (`env -0`), <stamp>.cwd;
// and <stamp>.kind "soft" for a file command (below). It uses only bash builtins, `date` and `env`,
// none of which is stubbed. nvidia-smi answers as a machine with $ATTUNE_IMPORT_GPUS GPUs when that
// is set, and says nothing otherwise. File commands (mkdir, touch, rm, cp, mv, ln, chmod) run for
// real; where the read-only sandbox refuses them they are recorded and pretend to succeed, so that
// a `set -e` script that prepares its checkpoint folder still reaches its launch. A launcher that
// wraps its job in a shell (`srun … bash -c 'python train.py …'`, `mpirun … sh -lc …`) runs that
// shell, so the training call inside is recorded too, with <stamp>.parent naming the wrapper.
const char* const kCaptureStub = R"STUB(#!/bin/bash
# attune recipe import: records this call instead of running it.
name=${0##*/}
case "$name" in
  python|python3*)
    # An installed tool written in Python (yq, ...) runs for real: it is not training.
    if [ -n "${ATTUNE_REAL_PYTHON:-}" ]; then
      for arg in "$@"; do
        case "$arg" in -*) continue ;; esac
        case "$arg" in
          /usr/bin/*|/usr/sbin/*|/bin/*|/sbin/*|/usr/lib/*|/usr/share/*) exec "$ATTUNE_REAL_PYTHON" "$@" ;;
        esac
        break
      done
    fi ;;
  pip|pip3)
    # What is installed is read for real (`pip list | grep megatron-core`); installing is not.
    case "${1:-}" in
      list|show|freeze) if [ -n "${ATTUNE_REAL_PYTHON:-}" ]; then exec "$ATTUNE_REAL_PYTHON" -m pip "$@"; fi ;;
    esac ;;
  mkdir|touch|rm|cp|mv|ln|chmod)
    for real in "/usr/bin/$name" "/bin/$name"; do
      if [ -x "$real" ]; then "$real" "$@" 2>/dev/null && exit 0; break; fi
    done
    soft=1 ;;
esac
stamp="$ATTUNE_CAPTURE_DIR/$(date +%s%N)-$$"
printf '%s\0' "$name" "$@" > "$stamp.argv"
env -0 > "$stamp.env"
pwd > "$stamp.cwd"
if [ -n "${soft:-}" ]; then printf soft > "$stamp.kind"; fi
if [ -n "${ATTUNE_IMPORT_WRAPPER:-}" ]; then printf '%s' "$ATTUNE_IMPORT_WRAPPER" > "$stamp.parent"; fi
case "$name" in
  sbatch)
    # The batch script, a file named among the arguments or standard input, runs as the job's
    # first task would, so the launch inside it is recorded; the script is kept beside the call.
    batch=""
    for ((i = 1; i <= $#; i++)); do
      if [[ "${!i}" != -* && -f "${!i}" ]]; then batch="${!i}"; break; fi
    done
    options=("${@:1:$((i - 1))}")
    if [ -n "$batch" ]; then
      cat "$batch" > "$stamp.script" 2>/dev/null
      set -- "${@:$((i + 1))}"
    else
      cat > "$stamp.script"
      set --
    fi
    # The allocation, as Slurm describes it to the batch script in SLURM_* variables: the script's
    # #SBATCH lines (read up to its first command, as sbatch does), then sbatch's own options,
    # which win.
    words=()
    while IFS= read -r line || [ -n "$line" ]; do
      case "$line" in
        '#SBATCH'*) read -ra more <<< "${line#'#SBATCH'}"; words+=("${more[@]}") ;;
        '#'*) ;;
        *) [[ "$line" =~ ^[[:space:]]*$ ]] || break ;;
      esac
    done < "$stamp.script"
    words+=("${options[@]}")
    nodes=1 per_node="" tasks="" gpus="" cpus="" partition="" account="" job="${batch##*/}"
    for ((w = 0; w < ${#words[@]}; w++)); do
      a=${words[w]} v=""
      case "$a" in
        --*=*) v=${a#*=} a=${a%%=*} ;;
        -[NnpAJc]?*) v=${a:2} a=${a:0:2} ;;
        -N|--nodes|-n|--ntasks|--ntasks-per-node|--gpus-per-node|--gres|-c|--cpus-per-task|-p|--partition|-A|--account|-J|--job-name)
          w=$((w + 1)) v=${words[w]:-} ;;
      esac
      case "$a" in
        -N|--nodes) nodes=${v%%-*} ;;
        -n|--ntasks) tasks=$v ;;
        --ntasks-per-node) per_node=$v ;;
        --gpus-per-node) gpus=${v##*:} ;;
        --gres) [[ "$v" == gpu* ]] && gpus=${v##*:} ;;
        -c|--cpus-per-task) cpus=$v ;;
        -p|--partition) partition=$v ;;
        -A|--account) account=$v ;;
        -J|--job-name) job=$v ;;
      esac
    done
    [[ "$nodes" =~ ^[0-9]+$ ]] && ((nodes > 0)) || nodes=1
    export SLURM_JOB_NUM_NODES=$nodes SLURM_NNODES=$nodes SLURM_SUBMIT_DIR="$PWD" SLURM_JOB_NAME="$job"
    if ((nodes > 1)); then SLURM_JOB_NODELIST="attune-node-[0-$((nodes - 1))]"; else SLURM_JOB_NODELIST=attune-node-0; fi
    export SLURM_JOB_NODELIST SLURM_NODELIST=$SLURM_JOB_NODELIST
    if [[ "$per_node" =~ ^[0-9]+$ ]]; then
      export SLURM_NTASKS_PER_NODE=$per_node SLURM_NTASKS=$((nodes * per_node))
    elif [[ "$tasks" =~ ^[0-9]+$ ]]; then
      export SLURM_NTASKS=$tasks
    fi
    if [ -n "${SLURM_NTASKS:-}" ]; then export SLURM_NPROCS=$SLURM_NTASKS; fi
    if [[ "$gpus" =~ ^[0-9]+$ ]]; then export SLURM_GPUS_PER_NODE=$gpus SLURM_GPUS_ON_NODE=$gpus; fi
    if [[ "$cpus" =~ ^[0-9]+$ ]]; then export SLURM_CPUS_PER_TASK=$cpus; fi
    if [ -n "$partition" ]; then export SLURM_JOB_PARTITION=$partition; fi
    if [ -n "$account" ]; then export SLURM_JOB_ACCOUNT=$account; fi
    # The file itself where there is one, so that bash's messages name it.
    ATTUNE_IMPORT_WRAPPER="${stamp##*/}" SLURM_PROCID=0 SLURM_NODEID=0 SLURM_LOCALID=0 SLURM_JOB_ID=0 \
      /bin/bash ${ATTUNE_IMPORT_NOUNSET:+-u} "${batch:-$stamp.script}" "$@"
    exit $? ;;
  srun|mpirun|mpiexec)
    for ((i = 1; i < $#; i++)); do
      case "${!i##*/}" in
        bash|sh|dash|zsh)
          j=$((i + 1))
          # The shell's own options before its -c (`bash -x -c`, `bash -e -o pipefail -c`,
          # `bash --login -c`) are passed over: the string is what the job runs.
          while ((j < $#)) && [[ "${!j}" =~ ^[-+] ]] && ! [[ "${!j}" =~ ^-[a-zA-Z]*c[a-zA-Z]*$ ]]; do
            case "${!j}" in
              -o|+o|-O|+O|--rcfile|--init-file) j=$((j + 2)) ;;
              *) j=$((j + 1)) ;;
            esac
          done
          if ((j < $#)) && [[ "${!j}" =~ ^-[a-zA-Z]*c[a-zA-Z]*$ ]]; then
            k=$((j + 1))
            # As task 0 of the step sees it (per-task values are never part of a recipe).
            ATTUNE_IMPORT_WRAPPER="${stamp##*/}" SLURM_PROCID=${SLURM_PROCID:-0} \
              SLURM_NODEID=${SLURM_NODEID:-0} SLURM_LOCALID=${SLURM_LOCALID:-0} \
              OMPI_COMM_WORLD_RANK=${OMPI_COMM_WORLD_RANK:-0} PMI_RANK=${PMI_RANK:-0} \
              /bin/bash -c "${!k}" "${@:$((k + 1))}"
            exit $?
          fi
          break ;;
      esac
    done ;;
esac
# What the stub prints it writes at once, and a reader that stops early (`| head -n 1`) is no
# failure: written a line at a time, the next line met a closed pipe and a `set -o pipefail`
# script stopped on SIGPIPE (exit 141), depending on timing.
answer() {
  trap '' PIPE
  printf '%s' "$1" 2>/dev/null
  exit 0
}
# `scontrol show hostnames LIST` expands a node list (the job's by default), as scripts that pick
# their MASTER_ADDR from it expect.
if [ "$name" = scontrol ] && [ "${1:-}" = show ] && [ "${2:-}" = hostnames ]; then
  list=${3:-${SLURM_JOB_NODELIST:-}} out=""
  if [[ "$list" =~ ^([^][,]*)\[([0-9]+)-([0-9]+)\]$ ]]; then
    width=${#BASH_REMATCH[2]}
    for ((h = 10#${BASH_REMATCH[2]}; h <= 10#${BASH_REMATCH[3]}; h++)); do
      printf -v line "%s%0${width}d\n" "${BASH_REMATCH[1]}" "$h"
      out+=$line
    done
  elif [ -n "$list" ]; then
    printf -v out '%s\n' ${list//,/ }
  fi
  answer "$out"
fi
if [ "$name" = nvidia-smi ] && [ -n "${ATTUNE_IMPORT_GPUS:-}" ]; then
  out=""
  for arg in "$@"; do
    case "$arg" in
      -L|--list-gpus) for ((i = 0; i < ATTUNE_IMPORT_GPUS; i++)); do out+="GPU $i: attune import stub"$'\n'; done; answer "$out" ;;
      --query-gpu=*) for ((i = 0; i < ATTUNE_IMPORT_GPUS; i++)); do out+="$i"$'\n'; done; answer "$out" ;;
    esac
  done
fi
exit 0
)STUB";

}  // namespace attune::importer
