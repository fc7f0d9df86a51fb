"""minigpt --profile (Megatron's flags) writes one real torch.profiler trace per rank, and
`attune profile analyze` reads them: the whole path, for real, on the CPU.

The CPU-basis figures (docs/profile.md) are recomputed here from the trace files: per thread, a
collective operator's span is communication and the other operators' time outside it compute.
"""

import glob
import json
import os
import subprocess
import tempfile

from minigpt_testlib import TINY, check, run

ATTUNE = os.environ.get('ATTUNE_BIN', 'build/bin/attune')


def union(intervals):
    merged = []
    for start, end in sorted(i for i in intervals if i[1] > i[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def length(intervals):
    return sum(e - s for s, e in union(intervals))


def minus(intervals, holes):
    """The parts of `intervals` outside `holes`, by unit-free sweeping of merged sets."""
    out = []
    holes = union(holes)
    for start, end in union(intervals):
        for h_start, h_end in holes:
            if h_end <= start or h_start >= end:
                continue
            if h_start > start:
                out.append((start, h_start))
            start = max(start, h_end)
        if start < end:
            out.append((start, end))
    return out


def is_collective(name):
    low = name.lower()
    return 'nccl' in low or 'gloo' in low or name.startswith('c10d::') or \
        name == 'record_param_comms'


def cpu_figures(path):
    with open(path) as f:
        events = json.load(f)
    events = events['traceEvents'] if isinstance(events, dict) else events
    threads = {}
    spans = []
    for e in events:
        if e.get('ph') != 'X' or e.get('cat', 'cpu_op') != 'cpu_op':
            continue
        if e['name'].startswith('ProfilerStep#'):
            continue
        span = (e['ts'] * 1000, (e['ts'] + e['dur']) * 1000)
        spans.append(span)
        comm, other = threads.setdefault((e['pid'], e['tid']), ([], []))
        (comm if is_collective(e['name']) else other).append(span)
    compute, comm = [], []
    for thread_comm, thread_other in threads.values():
        comm += thread_comm
        compute += minus(thread_other, thread_comm)
    window = max(e for _, e in spans) - min(s for s, _ in spans)
    overlap = length(comm) + length(compute) - length(comm + compute)
    return {'window_us': window / 1e3, 'busy_us': length(comm + compute) / 1e3,
            'compute_us': length(compute) / 1e3, 'communication_us': length(comm) / 1e3,
            'exposed_communication_us': (length(comm) - overlap) / 1e3}


def main():
    profile = ['--profile', '--use-pytorch-profiler', '--profile-step-start', '2',
               '--profile-step-end', '4']
    refused = run(TINY + ['--profile'], check=False)
    check(refused.returncode != 0 and 'add --use-pytorch-profiler' in refused.stdout,
          '--profile alone on CPU should be refused:\n' + refused.stdout)
    refused = run(TINY + ['--profile', '--use-pytorch-profiler'], check=False)
    check(refused.returncode != 0 and '--tensorboard-dir' in refused.stdout,
          '--use-pytorch-profiler without --tensorboard-dir should be refused')
    with tempfile.TemporaryDirectory() as tmp:
        traces = os.path.join(tmp, 'traces')
        run(TINY + ['--train-iters', '5'] + profile +
            ['--profile-ranks', '0', '1', '--tensorboard-dir', traces], nproc=2)
        files = sorted(glob.glob(os.path.join(traces, '*.pt.trace.json')))
        check([os.path.basename(f).split('.')[0] for f in files] == ['rank0', 'rank1'],
              'one trace per profiled rank: {}'.format(files))
        report = subprocess.run([ATTUNE, 'profile', 'analyze', '--json', traces],
                                capture_output=True, text=True)
        check(report.returncode == 0, 'attune profile analyze failed: ' + report.stderr)
        report = json.loads(report.stdout)
        check([r['rank'] for r in report['ranks']] == [0, 1], 'ranks 0 and 1')
        for rank, path in zip(report['ranks'], files):
            check(rank['basis'] == 'cpu_ops', 'a CPU run is measured on its operators')
            check(len(rank['steps']) == 2, 'steps 3 and 4 profiled: {}'.format(rank['steps']))
            check(rank['communication_us'] > 0, 'the gloo all-reduce shows as communication')
            for key, value in cpu_figures(path).items():
                check(abs(rank[key] - value) <= 0.001,
                      '{} {}: analyser {} vs independent {}'.format(path, key, rank[key], value))
        check(report['across_ranks']['straggler'] is not None, 'two ranks are compared')
        check(report['diagnoses'], 'a diagnosis comes out of a real run')
        text = subprocess.run([ATTUNE, 'profile', 'analyze', traces], capture_output=True,
                              text=True).stdout
        check('diagnosis:' in text and 'cpu_ops' in text, 'the text report:\n' + text)
    print('ok')


if __name__ == '__main__':
    main()
