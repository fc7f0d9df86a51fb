#!/usr/bin/python3
"""`attune recipe import` as users have their scripts.

Each case is a launch script using a construct real recipes use (branches, case, arrays with
comments, source of model files, quoted defaults, backquotes, heredocs, launch prefixes, positional
arguments, ...). The reference is what bash itself does: the script runs under plain bash, outside
any sandbox, with a recording `torchrun` (or python3, ray, uv) first on PATH, and the argv it
received is the truth. The import must give a recipe whose rendered launch (`attune recipe launch
--json`) has the same flags with the same values, and the same exported environment.

    import_test.py --attune BUILD/bin/attune
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ARGS = None
FAILURES = []
ROOT = None

REFERENCE_STUB = r'''#!/bin/bash
# Reference recorder for import_test.py: the argv and environment bash gave this command.
out="$REFERENCE_DIR/$(date +%s%N)-$$"
mkdir -p "$out"
printf '%s\0' "${0##*/}" "$@" > "$out/argv"
env -0 > "$out/env"
exit 0
'''
LAUNCHERS = ['torchrun', 'python', 'python3', 'ray', 'uv', 'nvidia-smi', 'sleep', 'pip']

# Reference srun: runs the shell it is given with the shell's own options (`srun [options] bash
# [-x -e -o pipefail ...] -c 'STRING'`), as srun does on a node; any other command is only recorded.
REFERENCE_SRUN = r'''#!/bin/bash
for ((i = 1; i < $#; i++)); do
  case "${!i##*/}" in
    bash|sh) SLURM_PROCID=0 exec "${@:i}" ;;
  esac
done
exit 0
'''


# A ModelZoo-style job script (run_wrapped): envsubst writes beside the config, py3compile is an
# installed Python tool (python3-minimal), and the sbatch heredoc's srun gets '${TRAINING_CMD}'.
ZOO_SCRIPT = r"""#!/bin/bash
set -euo pipefail
HERE=$(dirname "$(readlink -f "$0")")
export NUM_LAYERS=8
envsubst < "$HERE/model.yaml" > "$HERE/model.yaml.tmp"
LAYERS=$(sed -n 's/^LAYERS: //p' "$HERE/model.yaml.tmp")
TOOL=$(py3compile --version | cut -d' ' -f1)
export TRAINING_CMD="python /opt/megatron/pretrain_gpt.py --num-layers $LAYERS --hidden-size 512 --num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 64 --tensor-model-parallel-size 2 --tensorboard-dir /runs/$TOOL"
sbatch --exclusive <<EOF
#!/bin/bash
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
srun --mpi=pmix -l bash -c \\\${TRAINING_CMD} 2>&1 | tee /dev/null
EOF
"""

def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print('  FAIL: ' + what, flush=True)


def attune(*args, cwd=None, timeout=120):
    p = subprocess.run([ARGS.attune, *args], capture_output=True, text=True, timeout=timeout,
                       cwd=cwd or ROOT, errors='replace')
    return p.returncode, p.stdout, p.stderr


def write(rel, text, mode=0o644):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)
    os.chmod(path, mode)
    return path


def reference(script, args=(), env=None):
    """(argv, env) of the last launch call when plain bash runs the script."""
    bindir = os.path.join(ROOT, 'refbin')
    os.makedirs(bindir, exist_ok=True)
    stub = write('refbin/.stub', REFERENCE_STUB, 0o755)
    for name in LAUNCHERS:
        link = os.path.join(bindir, name)
        if not os.path.exists(link):
            os.symlink(stub, link)
    rec = tempfile.mkdtemp(dir=ROOT, prefix='ref-')
    full_env = {'PATH': bindir + ':/usr/bin:/bin', 'HOME': ROOT, 'REFERENCE_DIR': rec, 'LANG': 'C.UTF-8'}
    full_env.update(env or {})
    subprocess.run(['bash', script, *args], env=full_env, cwd=ROOT, capture_output=True, timeout=60)
    calls = []
    for name in sorted(os.listdir(rec)):
        argv = open(os.path.join(rec, name, 'argv'), 'rb').read().decode().split('\0')[:-1]
        envs = open(os.path.join(rec, name, 'env'), 'rb').read().decode().split('\0')[:-1]
        calls.append((argv, dict(e.split('=', 1) for e in envs if '=' in e)))
    shutil.rmtree(rec)
    launches = [c for c in calls if c[0][0] in ('torchrun', 'ray', 'uv') or
                (c[0][0].startswith('python') and len(c[0]) > 1 and c[0][1] != '-c')]
    assert launches, f'reference: {script} made no launch call ({calls})'
    return launches[-1]


def flags(argv):
    """{flag: [values]} after the training script (last occurrence wins, as argparse does)."""
    start = next(i for i, w in enumerate(argv) if w.endswith('.py')) + 1
    out, i = {}, start
    while i < len(argv):
        if argv[i].startswith('--'):
            j = i + 1
            while j < len(argv) and not argv[j].startswith('--'):
                j += 1
            out[argv[i]] = argv[i + 1:j]
            i = j
        else:
            out.setdefault('(positional)', []).append(argv[i])
            i += 1
    return out


def imported(script, extra=(), stack='megatron'):
    """(exit code, recipe launch argv, launch env, stderr) through `attune recipe import`."""
    recipe = os.path.join(ROOT, os.path.basename(script) + '.recipe.yaml')
    code, _, err = attune('recipe', 'import', script, '--stack', stack, '-o', recipe, *extra)
    if code != 0:
        return code, None, None, err
    code, out, err2 = attune('recipe', 'launch', recipe, '--json')
    if code != 0:
        return code, None, None, err + err2
    launch = json.loads(out)
    return 0, launch['argv'], dict(launch['env']), err


def compare(name, script, args=(), env=None, extra=(), expect_env=()):
    ref_argv, ref_env = reference(script, args, env)
    extra = list(extra)
    for a in args:
        extra += ['--arg', a]
    for k, v in (env or {}).items():
        extra += ['--env', f'{k}={v}']
    code, argv, launch_env, err = imported(script, extra)
    check(code == 0, f'{name}: import exit {code}: {err.strip()[-600:]}')
    if code != 0:
        return None
    want, got = flags(ref_argv), flags(argv)
    check(len(want) >= 7, f'{name}: the reference launch has only {len(want)} flags: {ref_argv}')
    for flag in sorted(set(want) | set(got)):
        check(want.get(flag) == got.get(flag),
              f'{name}: {flag}: bash gives {want.get(flag)}, the import {got.get(flag)}')
    print(f'  {len(want)} flags equal', flush=True)
    for key in expect_env:
        check(launch_env.get(key) == ref_env.get(key),
              f'{name}: env {key}: bash exports {ref_env.get(key)!r}, the import {launch_env.get(key)!r}')
    return err


# ---------------------------------------------------------------------------------------------
MODEL_FILE = '''# a model file, sourced by the run scripts
MODEL_ARGS=(
   --num-layers 24   # depth
   --hidden-size 2048
   --num-attention-heads 16
   --seq-length 4096
   --max-position-embeddings 4096
)
'''

CASES = {
    'branches': ('''#!/bin/bash
MODEL_SCALE=${MODEL_SCALE:-8B}
if [ "$MODEL_SCALE" = "800M" ]; then
  TP=1; HIDDEN=1024; HEADS=16; GBS=32
elif [ "$MODEL_SCALE" = "8B" ]; then
  TP=4; HIDDEN=4096; HEADS=32; GBS=8
else
  echo "unknown scale" >&2; exit 1
fi
torchrun --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size $TP \\
  --hidden-size $HIDDEN --num-attention-heads $HEADS --num-layers 4 --global-batch-size $GBS \\
  --micro-batch-size 1 --seq-length 1024 --max-position-embeddings 1024
''', {'env': {'MODEL_SCALE': '800M'}}),
    'case_and_args': ('''#!/bin/bash
set -euo pipefail
TOKENIZER=gpt2
while [ $# -gt 0 ]; do
  case "$1" in
    --tokenizer) TOKENIZER="$2"; shift 2 ;;
    --fast) FAST=1; shift ;;
    *) echo "unknown $1"; exit 1 ;;
  esac
done
case "$TOKENIZER" in
  gpt2) TOK_ARGS=(--tokenizer-type GPT2BPETokenizer --vocab-file vocab.json --merge-file merges.txt) ;;
  llama) TOK_ARGS=(--tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Llama-3.1-8B) ;;
esac
torchrun --nproc-per-node 8 pretrain_gpt.py "${TOK_ARGS[@]}" --num-layers 4 --hidden-size 512 \\
  --num-attention-heads 8 --micro-batch-size 1 --global-batch-size 16 --seq-length 1024 \\
  --max-position-embeddings 1024
''', {'args': ['--tokenizer', 'llama']}),
    'array_comments': ('''#!/bin/bash
ARGS=(
    --num-layers 8                 # Can use (8/16/32)
    --hidden-size 1024
    # --pipeline-model-parallel-size 2
    --num-attention-heads 16
    --attention-backend auto # Can use (flash/fused/unfused/local)
    # --use-wandb
    --micro-batch-size 2
    --global-batch-size 64
    --seq-length 2048
    --max-position-embeddings 2048
)
torchrun --nproc-per-node 8 pretrain_gpt.py "${ARGS[@]}"
''', {}),
    'source_model': ('''#!/bin/bash
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"
source "${SCRIPT_DIR}/models/model.sh"
TRAIN_ARGS=(--micro-batch-size 1 --global-batch-size 32 --train-iters 500000 --lr 3e-4)
torchrun --nproc-per-node 8 pretrain_gpt.py ${MODEL_ARGS[@]} "${TRAIN_ARGS[@]}"
''', {}),
    'quoted_defaults': ('''#!/bin/bash
NNODES=${NNODES:-"1"}
CHECKPOINT_PATH=${CHECKPOINT_PATH:-"checkpoints/gpt"}
export MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nproc-per-node 8 --nnodes "$NNODES" pretrain_gpt.py --save "$CHECKPOINT_PATH" \\
  --load "$CHECKPOINT_PATH" --num-layers 4 --hidden-size 512 --num-attention-heads 8 \\
  --micro-batch-size 1 --global-batch-size 16 --seq-length 1024 --max-position-embeddings 1024
''', {'expect_env': ['MASTER_ADDR', 'CUDA_DEVICE_MAX_CONNECTIONS']}),
    'backquotes_heredoc': ('''#!/bin/bash
cat > "$HOME/ds_config.json" <<EOF
{"train_batch_size": 16}
EOF
LAYERS=`echo 6`
DATE=`echo 2026`
torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers $LAYERS --hidden-size 512 \\
  --num-attention-heads 8 --micro-batch-size 1 --global-batch-size 16 --seq-length 1024 \\
  --max-position-embeddings 1024 --wandb-exp-name run-$DATE
''', {}),
    'launch_prefix': ('''#!/bin/bash
VENV_PREFIX="env PYTHONUNBUFFERED=1"
DISTRIBUTED_ARGS="--nproc_per_node 8 --nnodes 1 --node_rank 0 --master_addr localhost --master_port 6000"
$VENV_PREFIX python3 -m torch.distributed.run $DISTRIBUTED_ARGS pretrain_gpt.py \\
  --num-layers 4 --hidden-size 512 --num-attention-heads 8 --micro-batch-size 1 \\
  --global-batch-size 16 --seq-length 1024 --max-position-embeddings 1024
''', {}),
    'functions_loops': ('''#!/bin/bash
join_args() { local IFS=,; echo "$*"; }
LAYERS=0
for i in 1 2 3 4; do LAYERS=$((LAYERS + 2)); done
EXTRA=()
if [[ -n "${USE_SP:-}" ]]; then EXTRA+=(--sequence-parallel); fi
torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers $LAYERS --hidden-size 512 \\
  --num-attention-heads 8 --micro-batch-size 1 --global-batch-size 16 --seq-length 1024 \\
  --max-position-embeddings 1024 --tensor-model-parallel-size 2 "${EXTRA[@]}" \\
  --data-path $(join_args 1.0 a 1.0 b)
''', {'env': {'USE_SP': '1'}}),
}


def run_cases():
    write('models/model.sh', MODEL_FILE)
    for name, (text, opts) in CASES.items():
        print(f'case {name}', flush=True)
        script = write(f'{name}.sh', text, 0o755)
        compare(name, script, args=opts.get('args', ()), env=opts.get('env'),
                expect_env=opts.get('expect_env', ()))


def run_wrapped():
    """Launches hidden in `srun … bash -c '…'`: the training call inside the shell is imported."""
    srun = write('refbin/srun', REFERENCE_SRUN, 0o755)
    check(os.access(srun, os.X_OK), 'reference srun is executable')
    print('case srun bash -c (one python per task)', flush=True)
    script = write('srun_direct.sh', '''#!/bin/bash
set -euo pipefail
TP=2
ARGS="--tensor-model-parallel-size $TP --pipeline-model-parallel-size 2 --num-layers 8 --hidden-size 512"
srun -N 2 --ntasks-per-node=8 --label bash -c "export CUDA_DEVICE_MAX_CONNECTIONS=1; python pretrain_gpt.py $ARGS --num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 32"
''', 0o755)
    err = compare('srun_direct', script, expect_env=('CUDA_DEVICE_MAX_CONNECTIONS',))
    if err is not None:
        check('the launch ran inside a shell of srun -N 2' in err, f'srun_direct: the wrapper is said: {err[-400:]}')
        code, argv, _, _ = imported(script)
        check(code == 0 and argv[:5] == ['torchrun', '--nproc-per-node', '8', '--nnodes', '2'],
              f'srun_direct: srun\'s layout (2 nodes x 8 tasks) is the topology: {argv and argv[:5]}')
    # A container job's shell with options of its own before -c, and a multi-line string that
    # changes folder and exports before the launch (Megatron-LM's megatron_fsdp sbatch example).
    print('case srun bash --noprofile -x -e -o pipefail -c with a multi-line command', flush=True)
    script = write('srun_shell_options.sh', '''#!/bin/bash
HERE=$(pwd)
ARGS=(--tensor-model-parallel-size 2 --num-layers 8 --hidden-size 512 --num-attention-heads 8)
TRAINING_CMD="
cd $HERE;
export NVTE_FWD_LAYERNORM_SM_MARGIN=16;
python $HERE/pretrain_gpt.py ${ARGS[@]} --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size 32"
srun -N 2 --ntasks-per-node=8 --container-workdir=$HERE bash --noprofile -x -e -o pipefail -c "${TRAINING_CMD}" 2>&1 | tee /dev/null
''', 0o755)
    err = compare('srun_shell_options', script, expect_env=('NVTE_FWD_LAYERNORM_SM_MARGIN',))
    if err is not None:
        check('the launch ran inside a shell of srun -N 2' in err,
              f'srun_shell_options: the wrapper is said: {err[-400:]}')
        code, argv, _, _ = imported(script)
        check(code == 0 and argv[:5] == ['torchrun', '--nproc-per-node', '8', '--nnodes', '2'],
              f'srun_shell_options: srun\'s layout (2 nodes x 8 tasks) is the topology: {argv and argv[:5]}')
    print('case srun sh -c with torch.distributed.run inside', flush=True)
    script = write('srun_torchrun.sh', '''#!/bin/bash
NNODES=2
LAUNCHER="python -u -m torch.distributed.run --nproc_per_node 4 --nnodes $NNODES --rdzv_backend c10d"
CMD="pretrain_gpt.py --tensor-model-parallel-size 4 --num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 2 --global-batch-size 64"
srun --jobid 1234 bash -c "$LAUNCHER --node_rank \\$SLURM_PROCID $CMD"
''', 0o755)
    err = compare('srun_torchrun', script)
    if err is not None:
        code, argv, _, _ = imported(script)
        check(code == 0 and argv[:5] == ['torchrun', '--nproc-per-node', '4', '--nnodes', '2'],
              f'srun_torchrun: torchrun\'s layout inside srun is the topology: {argv and argv[:5]}')

    # The pattern of NVIDIA's Megatron-MoE-ModelZoo scripts: a config rewritten next to itself (the
    # read-only sandbox stops that; the import reruns on a scratch copy), an installed Python tool
    # run for a value, and the launch in an sbatch heredoc whose srun runs `bash -c
    # '${TRAINING_CMD}'` on the job's #SBATCH layout.
    print('case sbatch heredoc with srun inside, a config written beside itself', flush=True)
    os.makedirs(os.path.join(ROOT, 'zoo'), exist_ok=True)
    write('zoo/model.yaml', 'LAYERS: ${NUM_LAYERS}\n')
    script = write('zoo/run.sh', ZOO_SCRIPT, 0o755)
    recipe = os.path.join(ROOT, 'zoo.recipe.yaml')
    code, _, err = attune('recipe', 'import', script, '-o', recipe, cwd=os.path.join(ROOT, 'zoo'))
    check(code == 0, f'zoo: import failed: {err[-600:]}')
    check('it ran on a scratch copy of it' in err, f'zoo: the writable copy is said: {err[-600:]}')
    check('ran the batch script given to sbatch --exclusive as the job' in err, f'zoo: the batch job is said: {err[-600:]}')
    check(not os.path.exists(os.path.join(ROOT, 'zoo', 'model.yaml.tmp')), 'zoo: the script wrote into the real folder')
    if code == 0:
        code, out, err2 = attune('recipe', 'launch', recipe, '--json')
        argv = json.loads(out)['argv'] if code == 0 else []
        check(argv[:5] == ['torchrun', '--nproc-per-node', '8', '--nnodes', '4'],
              f'zoo: the job layout (#SBATCH 4 nodes x 8 tasks) is the topology: {argv[:5]} {err2}')
        got = flags(argv)
        check(got.get('--num-layers') == ['8'], f'zoo: the value from the rewritten config: {got.get("--num-layers")}')
        check(got.get('--tensorboard-dir') == ['/runs/py3compile'],
              f'zoo: the installed Python tool ran for real: {got.get("--tensorboard-dir")}')

    # A job script imported as it is (what `sbatch job.sh` would run): its #SBATCH lines are the
    # allocation, told to the script in SLURM_* variables as Slurm does; `scontrol show hostnames`
    # expands the node list; an srun without layout options runs on the job's layout.
    print('case a Slurm batch script imported directly', flush=True)
    script = write('job.sbatch', r"""#!/bin/bash
#SBATCH --job-name=l8 --nodes=3
#SBATCH --gres=gpu:h100:8 --ntasks-per-node=8
#SBATCH -p batch
set -euo pipefail
MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
# Readers that stop early: the stubs' output closes under them (SIGPIPE is no failure).
RACK=$(scontrol show hostnames 'rack-[00000-19999]' | head -n 1)
export CUDA_DEVICE_MAX_CONNECTIONS=1
srun --container-image=nvcr.io/nvidia/pytorch:24.07-py3 --mpi=pmix python pretrain_gpt.py --num-layers 8 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 --global-batch-size $((SLURM_NNODES * SLURM_GPUS_ON_NODE)) --tensor-model-parallel-size 2 --tensorboard-dir "/runs/$SLURM_JOB_NAME-$SLURM_NTASKS-$MASTER_ADDR" --wandb-project "$RACK"
""", 0o755)
    code, argv, launch_env, err = imported(script)
    check(code == 0, f'batch script: import failed: {err[-600:]}')
    if code == 0:
        check(argv[:5] == ['torchrun', '--nproc-per-node', '8', '--nnodes', '3'],
              f'batch script: the #SBATCH layout (3 nodes x 8 tasks) is the topology: {argv[:5]}')
        got = flags(argv)
        check(got.get('--global-batch-size') == ['24'], f'batch script: SLURM_NNODES x SLURM_GPUS_ON_NODE: {got.get("--global-batch-size")}')
        check(got.get('--tensorboard-dir') == ['/runs/l8-24-attune-node-0'],
              f'batch script: job name, task count and first host as Slurm gives them: {got.get("--tensorboard-dir")}')
        check(got.get('--wandb-project') == ['rack-00000'],
              f'batch script: the first of a 20,000-host list read with head -n 1: {got.get("--wandb-project")}')
        check(launch_env.get('CUDA_DEVICE_MAX_CONNECTIONS') == '1', f'batch script: the exported variable is kept: {launch_env}')
        check(not any(k.startswith('SLURM_') for k in launch_env),
              f'batch script: the allocation\'s SLURM_* variables are not the recipe\'s: {sorted(launch_env)}')
        check('a Slurm batch script (#SBATCH lines)' in err, f'batch script: said: {err[-600:]}')
        check('--container-image=nvcr.io/nvidia/pytorch:24.07-py3 (an srun option before the launcher' in err and
              'srun_args' in err, f'batch script: the container option is named as the launcher\'s: {err[-600:]}')
    # The same file without its header is a plain script: the srun gives no layout, Slurm's default
    # of one task on one node.
    plain = write('job-plain.sh', '\n'.join(l for l in open(script).read().splitlines()
                                             if not l.startswith('#SBATCH')).replace('$((SLURM_NNODES * SLURM_GPUS_ON_NODE))', '8') + '\n', 0o755)
    code, argv, _, err = imported(plain, ['--env', 'SLURM_JOB_NODELIST=n1', '--env', 'SLURM_JOB_NAME=x', '--env', 'SLURM_NTASKS=1'])
    recipe_text = open(plain + '.recipe.yaml').read() if code == 0 else ''
    check(code == 0 and 'nodes: 1\n' in recipe_text and 'gpus_per_node: 1\n' in recipe_text,
          f'plain script: no #SBATCH, no job layout (one task): {code} {recipe_text[-200:]} {err[-400:]}')
    check('a Slurm batch script' not in err, f'plain script: not said to be a batch script: {err[-400:]}')

    # `pip list` / `pip show` read what is installed, for real (slime's AMD script finds
    # megatron-core that way); `pip install` stays recorded.
    print('case pip show read for real', flush=True)
    script = write('pipshow.sh', r"""#!/bin/bash
set -euo pipefail
PIPV=$(pip show pip 2>/dev/null | sed -n 's/^Version: //p' || true)
pip install --no-deps megatron-core
torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 --micro-batch-size 1 --global-batch-size 8 --tensorboard-dir "/runs/v$PIPV"
""", 0o755)
    code, argv, _, err = imported(script)
    expected = ''
    for d in os.environ.get('PATH', '').split(':') + ['/usr/bin']:
        real = os.path.realpath(os.path.join(d, 'python3')) if d else ''
        if real and os.path.isfile(real) and open(real, 'rb').read(4) == b'\x7fELF':
            p = subprocess.run([real, '-m', 'pip', 'show', 'pip'], capture_output=True, text=True)
            expected = next((l[len('Version: '):] for l in p.stdout.splitlines() if l.startswith('Version: ')), '')
            break
    check(code == 0 and flags(argv).get('--tensorboard-dir') == ['/runs/v' + expected],
          f'pip show: the installed version ({expected!r}) is read: {code} {argv and flags(argv).get("--tensorboard-dir")} {err[-300:]}')
    check('also called (recorded, not run, not in the recipe): pip install' in err, f'pip install stays recorded: {err[-400:]}')


def run_slime():
    print('case slime (ray job submit, sourced model, runtime-env json)', flush=True)
    write('slime/scripts/models/m.sh', MODEL_FILE)
    script = write('slime/scripts/run.sh', '''#!/bin/bash
pkill -9 sglang
sleep 3
ray stop --force
set -ex
SCRIPT_DIR="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" &>/dev/null && pwd)"
source "${SCRIPT_DIR}/models/m.sh"
ROLLOUT_ARGS=(--rollout-batch-size 32 --n-samples-per-prompt 8 --num-rollout 3000 --global-batch-size 256)
PERF_ARGS=(--tensor-model-parallel-size 2 --sequence-parallel --micro-batch-size 1)
ray start --head --num-gpus 8
ray job submit --address="http://127.0.0.1:8265" -- python3 train.py --actor-num-nodes 1 \\
   --actor-num-gpus-per-node 8 --colocate ${MODEL_ARGS[@]} ${ROLLOUT_ARGS[@]} ${PERF_ARGS[@]}
''', 0o755)
    ref_argv, _ = reference(script)
    code, argv, _, err = imported(script, stack='slime')
    check(code == 0, f'slime: import exit {code}: {err[-600:]}')
    if code == 0:
        want, got = flags(ref_argv), flags(argv)
        for flag in sorted(set(want) | set(got)):
            check(want.get(flag) == got.get(flag), f'slime: {flag}: bash {want.get(flag)}, import {got.get(flag)}')
        for call in ('sleep 3', 'ray stop --force', 'ray start --head --num-gpus 8'):
            check(f'also called (recorded, not run, not in the recipe): {call}' in err,
                  f'slime: the setup call {call!r} is reported ({err[-400:]})')


def run_automodel():
    print('case automodel (config file alone, uv run automodel)', flush=True)
    cfg = write('am/cfg.yaml', '''# an AutoModel finetuning config
step_scheduler:
  global_batch_size: 32
  local_batch_size: 2
  max_steps: 100
model:
  _target_: nemo_automodel.NeMoAutoModelForCausalLM.from_pretrained
  pretrained_model_name_or_path: meta-llama/Llama-3.2-1B
distributed:
  _target_: nemo_automodel.components.distributed.fsdp2.FSDP2Manager
  tp_size: 1
  cp_size: 1
''')
    code, out, err = attune('recipe', 'import', cfg, '--stack', 'automodel')
    check(code == 0, f'automodel yaml: exit {code}: {err[-400:]}')
    check('global_batch_size: 32' in out and 'entry: [automodel, ' in out, f'automodel yaml: config imported ({out[:300]})')
    check('names no launch' in err and '--nodes N --gpus-per-node G' in err, 'automodel yaml: the missing topology is said')
    code, out, err = attune('recipe', 'import', cfg, '--stack', 'automodel', '--nodes', '4', '--gpus-per-node', '8')
    check(code == 0 and 'nodes: 4' in out and 'gpus_per_node: 8' in out and 'names no launch' not in err,
          f'automodel yaml with --nodes/--gpus-per-node: {code} {out[-200:]} {err[-300:]}')
    code, _, err = attune('recipe', 'import', cfg, '--stack', 'automodel', '--nodes', 'four')
    check(code == 2 and "--nodes 'four'" in err, f'automodel yaml --nodes four: {code} {err[-200:]}')
    script = write('am/run.sh', '''#!/bin/bash
cd "$(dirname "$0")"
uv run --with nemo-automodel automodel finetune llm -c cfg.yaml --nproc-per-node 4 \\
  --step_scheduler.local_batch_size 4
''', 0o755)
    code, out, err = attune('recipe', 'import', script, '--stack', 'automodel', cwd='/')
    check(code == 0, f'automodel uv run: exit {code}: {err[-400:]}')
    check('[--step_scheduler.local_batch_size, 4]' in out and 'gpus_per_node: 4' in out,
          f'automodel uv run: override and topology ({out[-400:]})')
    code, out, err = attune('recipe', 'import', cfg)  # the Megatron stack reads no configs
    check(code == 2 and 'is a YAML config, not a launch script' in err, f'megatron on a yaml: {code} {err[-300:]}')


def run_reports():
    print('case unresolved, static mode, sandbox, bad input', flush=True)
    script = write('needs.sh', '''#!/bin/bash
DATA=$1
torchrun --nproc-per-node 8 pretrain_gpt.py --data-path $DATA --num-layers 4 --hidden-size 512 \\
  --num-attention-heads 8 --micro-batch-size 1 --global-batch-size 16 --seq-length 1024 \\
  --max-position-embeddings 1024 --tensor-model-parallel-size $TP
''', 0o755)
    code, _, err = attune('recipe', 'import', script)
    check(code == 0, f'unresolved: exit {code}')
    check('unresolved: line 2: $1 (a positional argument)' in err, f'unresolved: $1 reported ({err[-500:]})')
    check('unresolved: line 3: TP' in err, f'unresolved: TP reported ({err[-500:]})')
    code, out, err = attune('recipe', 'import', script, '--arg', '/data/text', '--env', 'TP=2')
    check(code == 0 and 'unresolved' not in err and '[--data-path, /data/text]' in out and
          '[--tensor-model-parallel-size, 2]' in out, f'resolved: {code} {err[-300:]}')

    # A checkpoint folder the user gives under /tmp (private in the sandbox) is shown read-only: the
    # script's own existence check passes, and what it writes there stays out of the real folder.
    ckpt = tempfile.mkdtemp(dir='/tmp', prefix='attune-import-ckpt-')
    try:
        with open(os.path.join(ckpt, 'latest_checkpointed_iteration.txt'), 'w') as f:
            f.write('100')
        script = write('checks.sh', '''#!/bin/bash
CKPT=$1
[ -d "$CKPT" ] || { echo "Error: checkpoint path does not exist: $CKPT"; exit 1; }
[ -f "$CKPT/latest_checkpointed_iteration.txt" ] || { echo "no checkpoint in $CKPT"; exit 1; }
touch "$CKPT/started"
torchrun --nproc-per-node 8 pretrain_gpt.py --load $CKPT --num-layers 4 --hidden-size 512 \\
  --num-attention-heads 8 --micro-batch-size 1 --global-batch-size 16 --seq-length 1024 \\
  --max-position-embeddings 1024
''', 0o755)
        code, out, err = attune('recipe', 'import', script, '--arg', ckpt)
        check(code == 0 and f'[--load, {ckpt}]' in out, f'/tmp argument: {code} {err[-400:]}')
        check(not os.path.exists(os.path.join(ckpt, 'started')), '/tmp argument: the script wrote into it')
        # /tmp itself is not shown (it would hide the sandbox's scratch folder): the script's check
        # fails as the script says, and the import says so.
        code, out, err = attune('recipe', 'import', script, '--arg', '/tmp')
        check(code == 2 and 'no checkpoint in /tmp' in err, f'/tmp itself: {code} {err[-300:]}')
    finally:
        shutil.rmtree(ckpt, ignore_errors=True)

    # --no-exec names each line it cannot evaluate and writes nothing.
    branches = os.path.join(ROOT, 'branches.sh')
    code, out, err = attune('recipe', 'import', branches, '--no-exec')
    check(code == 2 and out == '', f'no-exec: exit {code}')
    for line in ('line 3: if', 'line 5: elif', 'line 7: else', 'line 9: fi'):
        check(line in err, f'no-exec names {line!r} ({err[:500]})')
    plain = write('plain.sh', '''export CUDA_DEVICE_MAX_CONNECTIONS=1
ARGS=(--num-layers 4 --hidden-size 512  # width
  --num-attention-heads 8)
torchrun --nproc-per-node 8 pretrain_gpt.py "${ARGS[@]}" --micro-batch-size 1 --global-batch-size 16 \\
  --seq-length 1024 --max-position-embeddings 1024
''')
    code, out, err = attune('recipe', 'import', plain, '--no-exec')
    check(code == 0 and '[--hidden-size, 512]' in out and 'width' not in out, f'no-exec plain: {code} {err} {out}')

    # --no-exec reads a batch script's #SBATCH header too: an srun without a layout of its own runs
    # on the job's allocation (it imported as one GPU), one with its own keeps it.
    job = write('job_static.sbatch', '''#!/bin/bash
#SBATCH --nodes=3 --ntasks-per-node 8
# the header ends at the first command
#SBATCH -J static
export CUDA_DEVICE_MAX_CONNECTIONS=1
srun \\
  python pretrain_gpt.py --num-layers 4 --hidden-size 512 --num-attention-heads 8 \\
  --micro-batch-size 1 --global-batch-size 48 --seq-length 1024 --max-position-embeddings 1024
#SBATCH --nodes=9
''')
    code, out, err = attune('recipe', 'import', job, '--no-exec')
    check(code == 0 and 'nodes: 3' in out and 'gpus_per_node: 8' in out,
          f'no-exec batch script: the #SBATCH layout (3 x 8) is the topology: {code} {out[-200:]} {err}')
    check('--nodes=3 --ntasks-per-node=8' in err, f'no-exec batch script: said: {err}')
    own = write('job_own.sbatch', open(job).read().replace('srun \\\n', 'srun -N 2 --ntasks-per-node=4 \\\n'))
    code, out, err = attune('recipe', 'import', own, '--no-exec')
    check(code == 0 and 'nodes: 2' in out and 'gpus_per_node: 4' in out and 'allocation' not in err,
          f'no-exec batch script, srun with its own layout: {code} {out[-200:]} {err}')

    # The sandbox: nothing outside its scratch folders changes, and a hung script is stopped.
    victim = os.path.join(ROOT, 'victim.txt')
    with open(victim, 'w') as f:
        f.write('keep')
    outside = os.path.join(ROOT, 'created-by-script')
    hostile = write('hostile.sh', f'''#!/bin/bash
rm -f {victim}
echo gone > {victim}
mkdir -p {outside}
touch /etc/attune-import-was-here
torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 512 --num-attention-heads 8 \\
  --micro-batch-size 1 --global-batch-size 16 --seq-length 1024 --max-position-embeddings 1024
''', 0o755)
    code, out, err = attune('recipe', 'import', hostile)
    check(code == 0, f'hostile: import exit {code}: {err[-300:]}')
    check(open(victim).read() == 'keep', 'hostile: a file outside the sandbox was changed')
    check(not os.path.exists(outside) and not os.path.exists('/etc/attune-import-was-here'),
          'hostile: the script created files outside the sandbox')
    # A `set -e` script that prepares folders next to itself (read-only in the sandbox) still
    # reaches its launch; the refused commands are said.
    prepares = write('prepares.sh', f'''#!/bin/bash
set -euo pipefail
mkdir -p "$(dirname "$0")/cache/run1"
touch "$(dirname "$0")/cache/stamp"
mkdir -p "$HOME/logs" && echo ok > "$HOME/logs/started"
torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4 --hidden-size 512 --num-attention-heads 8 \\
  --micro-batch-size 1 --global-batch-size 16 --seq-length 1024 --max-position-embeddings 1024 \\
  --data-cache-path "$(dirname "$0")/cache"
''', 0o755)
    code, out, err = attune('recipe', 'import', prepares)
    check(code == 0 and '--data-cache-path' in out, f'prepares: exit {code}: {err[-400:]}')
    check('refused by the read-only sandbox (the script went on as if it had worked): mkdir -p' in err,
          f'prepares: the refused mkdir is said ({err[-400:]})')
    check(not os.path.exists(os.path.join(ROOT, 'cache')), 'prepares: a folder was created outside the sandbox')
    check('$HOME/logs' not in err and 'logs/started' not in err, f'prepares: scratch HOME is writable ({err[-300:]})')

    hang = write('hang.sh', 'while true; do :; done\n')
    started = time.monotonic()
    code, out, err = attune('recipe', 'import', hang, '--timeout', '2')
    print(f'  hung script stopped after {time.monotonic() - started:.1f} s', flush=True)
    check(code != 0 and 'did not finish within 2 s' in err, f'hang: {code} {err[-300:]}')

    # Bad input: a missing file, NUL bytes, unbalanced quotes, no launch at all.
    code, _, err = attune('recipe', 'import', os.path.join(ROOT, 'missing.sh'))
    check(code != 0 and 'missing.sh' in err, f'missing: {code} {err}')
    nul = os.path.join(ROOT, 'nul.sh')
    with open(nul, 'wb') as f:
        f.write(b'torchrun pretrain_gpt.py\x00 --num-layers 4\n')
    code, _, err = attune('recipe', 'import', nul)
    check(code == 2 and 'NUL bytes at offset 24' in err, f'nul: {code} {err}')
    quotes = write('quotes.sh', 'ARGS=(--num-layers "4)\ntorchrun --nproc-per-node 8 pretrain_gpt.py "${ARGS[@]}"\n')
    code, _, err = attune('recipe', 'import', quotes)
    check(code == 2 and 'no training launch' in err and 'unexpected EOF' in err, f'quotes: {code} {err[-400:]}')
    code, _, err = attune('recipe', 'import', quotes, '--no-exec')
    check(code != 0, f'quotes --no-exec: exit {code}')
    nothing = write('nothing.sh', 'echo hello\npip install torch\n')
    code, _, err = attune('recipe', 'import', nothing)
    check(code == 2 and 'no training launch' in err and 'pip install torch' in err, f'nothing: {code} {err}')
    # A script that checks for its entry point and says why on stdout (as Megatron-LM's own
    # examples do) before exiting: the user sees its words, not only the exit status.
    guarded = write('guarded.sh', 'if [ ! -f pretrain_gpt.py ]; then\n'
                    '  echo "Error: pretrain_gpt.py not found; run this from the Megatron-LM root"\n'
                    '  exit 1\nfi\ntorchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 4\n')
    code, _, err = attune('recipe', 'import', guarded)
    check(code == 2 and 'exited with status 1' in err and 'its last output lines' in err and
          'run this from the Megatron-LM root' in err, f'guarded: {code} {err}')
    code, _, err = attune('recipe', 'import', nothing, '--timeout', 'soon')
    check(code == 2 and '--timeout' in err, f'bad timeout: {code} {err}')
    code, _, err = attune('recipe', 'import', nothing, '--env', 'NOEQUALS')
    check(code == 2 and 'NAME=VALUE' in err, f'bad env: {code} {err}')

    # A 10 MB script (assignments and comments before the launch line) imports, in both modes.
    big = os.path.join(ROOT, 'big.sh')
    with open(big, 'w') as f:
        line = 'X=1  # ' + 'padding ' * 12 + '\n'
        f.write(line * (10_000_000 // len(line)))
        f.write(open(plain).read())
    for mode in ([], ['--no-exec']):
        started = time.monotonic()
        code, out, err = attune('recipe', 'import', big, *mode, timeout=120)
        print(f'  10 MB script {mode or "exec"}: exit {code} in {time.monotonic() - started:.1f} s', flush=True)
        check(code == 0 and '[--hidden-size, 512]' in out, f'big {mode}: {code} {err[-300:]}')


def main():
    global ARGS, ROOT
    parser = argparse.ArgumentParser()
    parser.add_argument('--attune', required=True)
    ARGS = parser.parse_args()
    # The import sandbox needs bubblewrap and namespaces (root, or unprivileged user namespaces).
    # Where neither exists, `recipe import` says so (tested below only where it can run): skip,
    # as ctest's SKIP_RETURN_CODE 77, rather than fail the whole suite for the machine's sake.
    try:
        probe = subprocess.run(['bwrap', '--die-with-parent', '--unshare-all', '--ro-bind', '/', '/',
                                '--dev', '/dev', '--proc', '/proc', 'true'], capture_output=True, text=True)
        usable, why = probe.returncode == 0, probe.stderr.strip()
    except FileNotFoundError:
        usable, why = False, 'bwrap is not installed (tools/setup.sh installs bubblewrap)'
    if not usable:
        print(f'recipe_import_test: skipped: cannot start a bubblewrap sandbox here: {why}')
        return 77
    ROOT = tempfile.mkdtemp(prefix='attune-import-test-')
    try:
        run_cases()
        run_wrapped()
        run_slime()
        run_automodel()
        run_reports()
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)
    if FAILURES:
        print(f'{len(FAILURES)} failure(s)')
        return 1
    print('all import checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
