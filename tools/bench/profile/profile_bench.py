#!/usr/bin/env python3
"""Large-trace benchmark for `attune profile analyze`: peak memory and time against Python's
json.load on the same file (the baseline a script reading the trace starts from).

  tools/bench/profile/profile_bench.py [--attune build/bin/attune] [--size-mb 500]
      [--source ../shared/fixtures/traces/a100x8_rank3.json.gz] [--dir /tmp] [--gzip] [--keep]

Builds a trace of about --size-mb by repeating a real trace's events back to back in time
(timestamps shifted past the previous copy, correlation and External ids offset so that launches
still match their kernels), then runs, each in a fresh child process:
  1. attune profile analyze --json FILE
  2. python3 -c 'import json; json.load(open(FILE))'   (gzip.open for --gzip)
and prints wall time, CPU time and peak RSS (ru_maxrss) of each, and the ratios. A sanity check
compares the analyser's busy time with copies × the source's. Nothing is timed in CTest.
"""

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..'))


def shifted_events(events, copy, period_us, id_step):
    for e in events:
        e = dict(e)
        if 'ts' in e and isinstance(e['ts'], (int, float)):
            e['ts'] = e['ts'] + copy * period_us
        args = e.get('args')
        if isinstance(args, dict):
            args = dict(args)
            for key in ('correlation', 'External id'):
                if isinstance(args.get(key), int):
                    args[key] += copy * id_step
            e['args'] = args
        yield e


def build_trace(source, path, size_mb, use_gzip):
    with gzip.open(source, 'rt') as f:
        trace = json.load(f)
    events = trace.pop('traceEvents')
    timed = [e for e in events if isinstance(e.get('ts'), (int, float))]
    start = min(e['ts'] for e in timed)
    end = max(e['ts'] + e.get('dur', 0) for e in timed)
    period = (end - start) * 1.1
    id_step = 1 + max(max(e.get('args', {}).get(k, 0) for k in ('correlation', 'External id')
                          if isinstance(e.get('args', {}).get(k, 0), int)) for e in events)
    one_copy = len(json.dumps(events))
    copies = max(1, round(size_mb * 1e6 / one_copy))
    opener = gzip.open if use_gzip else open
    with opener(path, 'wt') as out:
        out.write('{')
        for key, value in trace.items():
            out.write(json.dumps(key) + ': ' + json.dumps(value) + ', ')
        out.write('"traceEvents": [')
        first = True
        for copy in range(copies):
            for e in shifted_events(events, copy, period, id_step):
                out.write(('' if first else ',\n') + json.dumps(e))
                first = False
        out.write(']}\n')
    return copies


def run_child(cmd):
    """Runs cmd in a child it reaps itself, so the rusage is that child's alone.

    Returns (wall s, cpu s, peak RSS MiB, stdout)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(cmd, stdout=out_file, stderr=err_file)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read().decode(), err_file.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit('command failed: %s\n%s' % (' '.join(cmd), err))
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--attune', default=os.path.join(REPO, 'build', 'bin', 'attune'))
    parser.add_argument('--source', default=os.path.join(
        REPO, '..', 'shared', 'fixtures', 'traces', 'a100x8_rank3.json.gz'))
    parser.add_argument('--size-mb', type=float, default=500)
    parser.add_argument('--dir', default=tempfile.gettempdir())
    parser.add_argument('--gzip', action='store_true', help='write and read the trace gzipped')
    parser.add_argument('--keep', action='store_true', help='keep the generated trace')
    parser.add_argument('--build-only', metavar='PATH', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:
        print(build_trace(args.source, args.build_only, args.size_mb, args.gzip))
        return

    path = os.path.join(args.dir, 'attune-bench-trace.json' + ('.gz' if args.gzip else ''))
    # Built in a child: this process stays small, so the children it forks to measure do not
    # start with its pages resident (ru_maxrss would count them).
    build = [sys.executable, os.path.abspath(__file__), '--build-only', path, '--source',
             args.source, '--size-mb', str(args.size_mb)] + (['--gzip'] if args.gzip else [])
    copies = int(subprocess.run(build, capture_output=True, text=True, check=True).stdout)
    size = os.path.getsize(path) / 1e6
    print('trace: %s, %.0f MB on disk, %d copies of %s' % (path, size, copies,
                                                          os.path.basename(args.source)))
    try:
        a_wall, a_cpu, a_rss, report = run_child([args.attune, 'profile', 'analyze', '--json', path])
        opener = 'gzip.open' if args.gzip else 'open'
        p_wall, p_cpu, p_rss, _ = run_child(
            [sys.executable, '-c', 'import json, gzip; json.load(%s(%r))' % (opener, path)])
        source_report = json.loads(subprocess.run(
            [args.attune, 'profile', 'analyze', '--json', args.source],
            capture_output=True, text=True, check=True).stdout)
    finally:
        if not args.keep:
            os.remove(path)
    busy = json.loads(report)['ranks'][0]['busy_us']
    expected = copies * source_report['ranks'][0]['busy_us']
    print('%-34s %9s %9s %12s' % ('', 'wall s', 'cpu s', 'peak RSS MiB'))
    print('%-34s %9.2f %9.2f %12.1f' % ('attune profile analyze', a_wall, a_cpu, a_rss))
    print('%-34s %9.2f %9.2f %12.1f' % ('python3 json.load (baseline)', p_wall, p_cpu, p_rss))
    print('ratio attune/python: wall %.2f, cpu %.2f, peak RSS %.3f' % (
        a_wall / p_wall, a_cpu / p_cpu, a_rss / p_rss))
    print('sanity: busy %.0f us = %.4f x (copies x the source trace\'s busy)' % (
        busy, busy / expected))


if __name__ == '__main__':
    main()
