#!/usr/bin/env python3
"""`attune profile analyze` on the real traces in ../shared/fixtures/traces/.

Every figure is recomputed here from the trace with plain interval arithmetic, straight from the
definitions in docs/profile.md, and compared with the analyser's --json output. Then the bad-input
cases on real data: a truncated trace, a missing distributedInfo, and clock skew between ranks
(copies written to a temporary directory, never into the repository).

Environment: ATTUNE_BIN (the binary under test), ATTUNE_SHARED_DIR (the shared/ folder).
"""

import decimal
import gzip
import json
import os
import subprocess
import sys
import tempfile

ATTUNE = os.environ.get('ATTUNE_BIN', 'build/bin/attune')
TRACES = os.path.join(os.environ.get('ATTUNE_SHARED_DIR', '../shared'), 'fixtures', 'traces')
GPU_TRACES = ['gpu128_rank0', 'gpu128_rank1', 'a100x2_resnet_rank0', 'a100x8_rank3',
              'a100x16_rank0']
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print('FAIL: ' + message)


def close(a, b, what):
    a, b = float(a), float(b)
    check(abs(a - b) <= 0.0005, '%s: analyser %r, independent %r' % (what, a, b))


def load(name):
    with gzip.open(os.path.join(TRACES, name + '.json.gz'), 'rt') as f:
        return json.load(f, parse_float=decimal.Decimal)


def analyze(*paths, expect_rc=0):
    run = subprocess.run([ATTUNE, 'profile', 'analyze', '--json'] + list(paths),
                         capture_output=True, text=True)
    check(run.returncode == expect_rc, '%s: exit %d (expected %d): %s' % (
        paths, run.returncode, expect_rc, run.stderr or run.stdout[:300]))
    return json.loads(run.stdout) if run.stdout.strip() else None


# --- independent interval arithmetic, in integer nanoseconds: timestamps are read as exact
# decimals (a double holds 4.4e15 ns only to 0.5 ns, and sums of thousands of gaps drift) ---

def ns(us):
    return int((decimal.Decimal(us) * 1000).to_integral_value(decimal.ROUND_HALF_UP))


def span(e):
    return (ns(e['ts']), ns(e['ts']) + ns(e['dur']))


def union(intervals):
    merged = []
    for start, end in sorted(i for i in intervals if i[1] > i[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def length(intervals):
    return sum(end - start for start, end in union(intervals))


def figures(trace):
    compute, comm, memory = [], [], []
    for e in trace['traceEvents']:
        if e.get('ph') != 'X':
            continue
        if e.get('cat') == 'kernel':
            (comm if 'nccl' in e['name'].lower() else compute).append(span(e))
        elif e.get('cat') in ('gpu_memcpy', 'gpu_memset'):
            memory.append(span(e))
    everything = compute + comm + memory
    window = max(e for _, e in everything) - min(s for s, _ in everything)
    busy = length(everything)
    # |comm ∩ compute| = |comm| + |compute| − |comm ∪ compute|
    overlap = length(comm) + length(compute) - length(comm + compute)
    return {
        'window_us': window / 1e3, 'busy_us': busy / 1e3, 'idle_us': (window - busy) / 1e3,
        'compute_us': length(compute) / 1e3, 'communication_us': length(comm) / 1e3,
        'memory_us': length(memory) / 1e3,
        'exposed_communication_us': (length(comm) - overlap) / 1e3,
        'comm_compute_overlap': overlap / length(comm) if comm else None,
        'kernels': len(compute) + len(comm), 'communication_kernels': len(comm),
        'memory_events': len(memory),
    }


def launch_bound(trace):
    """Idle gaps ending with an activity whose launch call began after the gap began."""
    launch = {e['args']['correlation']: ns(e['ts']) for e in trace['traceEvents']
              if e.get('cat') == 'cuda_runtime' and 'correlation' in e.get('args', {})
              and any(w in e['name'] for w in ('Launch', 'Memcpy', 'Memset'))}
    acts = sorted(((span(e)[0], e.get('args', {}).get('correlation', -1), span(e)[1])
                   for e in trace['traceEvents']
                   if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset')))
    gaps, bound, bound_ns, busy_end = 0, 0, 0, acts[0][2]
    for start, corr, end in acts[1:]:
        if start > busy_end:
            gaps += 1
            if corr in launch and launch[corr] > busy_end:
                bound += 1
                bound_ns += start - busy_end
        busy_end = max(busy_end, end)
    return gaps, bound, bound_ns / 1e3


def top_kernel(trace):
    total = {}
    for e in trace['traceEvents']:
        if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset'):
            total[e['name']] = total.get(e['name'], 0) + ns(e['dur'])
    name, total_ns = max(total.items(), key=lambda kv: kv[1])
    return name, total_ns / 1e3


def test_gpu_trace(name):
    trace = load(name)
    report = analyze(os.path.join(TRACES, name + '.json.gz'))
    rank = report['ranks'][0]
    check(rank['rank'] == trace['distributedInfo']['rank'], name + ': rank')
    check(rank['rank_source'] == 'distributedInfo', name + ': rank source')
    check(rank['world_size'] == trace['distributedInfo']['world_size'], name + ': world size')
    check(rank['basis'] == 'gpu_kernels', name + ': basis')
    for key, value in figures(trace).items():
        if value is None:
            check(rank[key] is None, '%s: %s should be null' % (name, key))
        elif isinstance(value, int):
            check(rank[key] == value, '%s: %s %r vs %r' % (name, key, rank[key], value))
        else:
            close(rank[key], value, name + ': ' + key)
    gaps, bound, bound_us = launch_bound(trace)
    check(rank['launch_overhead']['gaps'] == gaps, name + ': gaps')
    check(rank['launch_overhead']['launch_bound_gaps'] == bound, name + ': launch-bound gaps')
    close(rank['launch_overhead']['launch_bound_us'], bound_us, name + ': launch-bound us')
    top_name, top_total = top_kernel(trace)
    check(rank['top_kernels'][0]['name'] == top_name, name + ': top kernel')
    close(rank['top_kernels'][0]['total_us'], top_total, name + ': top kernel time')
    steps = sorted(int(e['name'].split('#')[1]) for e in trace['traceEvents']
                   if e.get('name', '').startswith('ProfilerStep#'))
    check([s['step'] for s in rank['steps']] == steps, name + ': steps')
    nccl = sum(1 for e in trace['traceEvents']
               if e.get('cat') == 'kernel' and 'nccl' in e['name'].lower())
    check(sum(c['count'] for c in rank['collectives']) == nccl, name + ': collectives count')
    return report


def test_collective_sizes():
    """a100x2: every NCCL kernel carries its message size; check the all-reduce bytes."""
    trace = load('a100x2_resnet_rank0')
    sizes = sorted(e['args']['In msg nelems'] * 4 for e in trace['traceEvents']
                   if e.get('cat') == 'kernel' and e['args'].get('Collective name') == 'allreduce')
    report = analyze(os.path.join(TRACES, 'a100x2_resnet_rank0.json.gz'))
    allreduce = [c for c in report['ranks'][0]['collectives'] if c['type'] == 'allreduce']
    check(len(allreduce) == 1, 'a100x2: one all-reduce row')
    row = allreduce[0]
    check(row['count'] == len(sizes), 'a100x2: all-reduce count')
    check(row['total_bytes'] == sum(sizes), 'a100x2: all-reduce bytes')
    check(row['max_bytes'] == sizes[-1] and row['min_bytes'] == sizes[0], 'a100x2: sizes range')
    check(row['size_source'] == 'kernel args', 'a100x2: size source')


def test_two_ranks():
    """gpu128 ranks 0 and 1 together: the straggler is the rank with more compute per step."""
    report = analyze(os.path.join(TRACES, 'gpu128_rank0.json.gz'),
                     os.path.join(TRACES, 'gpu128_rank1.json.gz'))
    check([r['rank'] for r in report['ranks']] == [0, 1], 'gpu128: ranks in order')
    across = report['across_ranks']
    check(across['aligned'], 'gpu128: ranks of one job are aligned')
    per_step = [sum(s['compute_us'] for s in r['steps']) / len(r['steps']) for r in report['ranks']]
    expected = report['ranks'][per_step.index(max(per_step))]['rank']
    check(across['straggler']['rank'] == expected, 'gpu128: straggler')
    return report


def test_cpu_only():
    report = analyze(os.path.join(TRACES, 'cpu_only_rank34.json.gz'))
    rank = report['ranks'][0]
    check(rank['basis'] == 'cpu_ops' and rank['rank'] == 34, 'cpu-only: basis and rank')
    check(any('CPU-only trace' in n for n in rank['notes']), 'cpu-only: note says so')
    trace = load('cpu_only_rank34')
    ops = [(e['ts'], e['ts'] + e['dur']) for e in trace['traceEvents'] if e.get('cat') == 'cpu_op']
    close(rank['window_us'], max(e for _, e in ops) - min(s for s, _ in ops), 'cpu-only: window')


def test_truncated(tmp):
    with gzip.open(os.path.join(TRACES, 'a100x2_resnet_rank0.json.gz'), 'rb') as f:
        text = f.read()
    path = os.path.join(tmp, 'cut_rank0.json.gz')
    with gzip.open(path, 'wb') as f:
        f.write(text[:len(text) // 2])
    run = subprocess.run([ATTUNE, 'profile', 'analyze', path], capture_output=True, text=True)
    check(run.returncode == 2, 'truncated: exit 2, got %d' % run.returncode)
    check('truncated' in run.stderr and 'line' in run.stderr, 'truncated: message: ' + run.stderr)


def test_missing_distributed_info(tmp):
    trace = load('gpu128_rank1')
    del trace['distributedInfo']
    named = os.path.join(tmp, 'copy_rank1.json')
    anonymous = os.path.join(tmp, 'copy.json')
    for path in (named, anonymous):
        with open(path, 'w') as f:
            json.dump(trace, f, default=float)
    rank = analyze(named)['ranks'][0]
    check(rank['rank'] == 1 and rank['rank_source'] == 'file name', 'no distributedInfo: file name')
    rank = analyze(anonymous)['ranks'][0]
    check(rank['rank'] is None and rank['rank_source'] == 'unknown', 'no distributedInfo: unknown')
    check(any('rank is unknown' in n for n in rank['notes']), 'no distributedInfo: note')


def test_clock_skew(tmp):
    trace = load('gpu128_rank1')
    for e in trace['traceEvents']:
        if 'ts' in e:
            e['ts'] += 3600 * 1000 * 1000  # one hour
    path = os.path.join(tmp, 'skewed_rank1.json')
    with open(path, 'w') as f:
        json.dump(trace, f, default=float)
    report = analyze(os.path.join(TRACES, 'gpu128_rank0.json.gz'), path)
    across = report['across_ranks']
    check(not across['aligned'], 'skew: not aligned')
    check(any('clock skew' in n for n in across['notes']), 'skew: note')
    check(abs(across['max_step_offset_us'] - 3600e6) < 10e3, 'skew: offset about an hour')
    original = analyze(os.path.join(TRACES, 'gpu128_rank1.json.gz'))['ranks'][0]
    close(report['ranks'][1]['busy_us'], original['busy_us'], 'skew: per-rank figures stand')


def main():
    for name in GPU_TRACES:
        test_gpu_trace(name)
    test_collective_sizes()
    test_two_ranks()
    test_cpu_only()
    with tempfile.TemporaryDirectory() as tmp:
        test_truncated(tmp)
        test_missing_distributed_info(tmp)
        test_clock_skew(tmp)
    if failures:
        print('%d failure(s)' % len(failures))
        sys.exit(1)
    print('ok: %d GPU traces, collectives, two ranks, CPU-only, truncated, no distributedInfo, '
          'clock skew' % len(GPU_TRACES))


if __name__ == '__main__':
    main()
