"""Helpers for the minigpt tests: run pretrain_gpt.py and read Megatron-format log lines."""

import os
import re
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
MINIGPT = os.path.join(REPO, 'tools', 'minigpt')
ENTRY = os.path.join(MINIGPT, 'pretrain_gpt.py')
TORCHRUN = os.path.join(MINIGPT, 'torchrun_compat.py')
PYTHON = '/usr/bin/python3'

# A model small enough that a run is dominated by the ~1.5 s torch import.
TINY = ['--num-layers', '2', '--hidden-size', '64', '--num-attention-heads', '2',
        '--seq-length', '32', '--vocab-size', '128', '--global-batch-size', '8',
        '--train-iters', '4', '--log-interval', '1', '--lr', '3e-3',
        '--calculate-per-token-loss']

ITERATION_RE = re.compile(
    r'^ \[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}\]'
    r' iteration +(?P<it>\d+)/ +(?P<total>\d+) \|'
    r' consumed samples: +(?P<consumed>\d+) \|'
    r' elapsed time per iteration \(ms\): (?P<ms>\d+\.\d) \|'
    r'(?: throughput per GPU \(TFLOP/s/GPU\): (?P<tflops>\d+\.\d) \|)?'
    r' learning rate: (?P<lr>\d\.\d{6}E[+-]\d{2}) \|'
    r' global batch size: +(?P<gbs>\d+) \|'
    r' lm loss: (?P<loss>\d\.\d{6}E[+-]\d{2}) \|'
    r' loss scale: (?P<scale>\d+\.\d) \|'
    r' grad norm: (?P<gnorm>\d+\.\d{3}) \|'
    r' number of skipped iterations: +(?P<skipped>\d+) \|'
    r' number of nan iterations: +(?P<nan>\d+) \|$')

MEMORY_RE = re.compile(
    r'^\[Rank (\d+)\] \(after (\d+) iterations\) memory \(MB\) \| allocated: \d+\.\d{2} \|'
    r' max allocated: \d+\.\d{2} \| reserved: \d+\.\d{2} \| max reserved: \d+\.\d{2}$')


def run(flags, env=None, nproc=1, check=True):
    """Runs minigpt (through torchrun_compat when nproc > 1); returns CompletedProcess."""
    full_env = dict(os.environ)
    full_env.setdefault('OMP_NUM_THREADS', '1')
    full_env.update(env or {})
    if nproc > 1:
        cmd = [PYTHON, TORCHRUN, '--standalone', '--nproc-per-node', str(nproc), ENTRY] + flags
    else:
        cmd = [PYTHON, ENTRY] + flags
    proc = subprocess.run(cmd, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=300)
    if check and proc.returncode != 0:
        fail('command failed ({}): {}\n{}'.format(proc.returncode, ' '.join(cmd), proc.stdout))
    return proc


def iteration_records(output):
    return [m.groupdict() for m in map(ITERATION_RE.match, output.splitlines()) if m]


def losses(output):
    """lm loss of each iteration line (with --log-interval 1, line 2 averages iterations 1-2)."""
    return [float(r['loss']) for r in iteration_records(output)]


def fail(message):
    print('FAIL: ' + message, flush=True)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def relative_difference(a, b):
    return max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))
