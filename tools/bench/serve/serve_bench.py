#!/usr/bin/python3
"""Benchmark of `attune serve` over a 10,000-candidate campaign (not a test: it prints figures).

    tools/bench/serve/serve_bench.py --attune build/bin/attune --writer build/bin/attune_write_log \\
        [--candidates 10000] [--clients 1,10,30] [--seconds 15] [--scratch /dev/shm]

1. A real campaign of the random agent on the simulated cluster (big-campaign.yaml) is the
   template; its candidates' events are replicated, renamed, until the campaign holds N
   candidates (later copies never change the leader), and written into a fresh log with
   attune_write_log. `attune status` folds it like any other campaign.
2. `attune serve` over it: the first and the cached answer of /api/campaigns/NAME, their size;
   the first paint of the campaign page in headless Chromium (navigation until the leaderboard
   and the chart are drawn).
3. Server CPU per connected client while the campaign grows by one candidate (6 events) every
   200 ms: K event-stream clients that only listen, then K clients that also re-read the campaign
   JSON after each update, as the page does. CPU is the server's utime+stime over the window.

Figures (2026-12-04, a 2-core VM shared with other builds, so noisy; --seconds 10):
    campaign: 61185 events; attune status folds it in 10.4 s (the fold's own lookups are linear)
    /api/campaigns/big: 9.2 MB, first answer 1.09 s (rendering), cached 64 ms
    first paint in Chromium: 1.4 s cold, 1.9 s warm (10390 chart points, first 500 of 10001 rows)
    listening clients:   0: 3.2% of a core; 1, 10, 30: within noise of that (< 0.2 ms CPU per
                         client per second)
    re-reading clients:  1: 25% of a core (221 ms per client per second); 10: 26% (23 ms);
                         30: 26% (7.5 ms): the page is rendered at most once per two rendering
                         times whatever the number of clients, so the cost per client falls.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
sys.path.insert(0, os.path.join(SOURCE, 'tests', 'integration', 'serve'))
import cdp  # noqa: E402
from serve_util import Env, Server, open_stream  # noqa: E402

CAND = re.compile(r'(?<![A-Za-z0-9])c(\d{3,5})(?![0-9])')


def template_events(env, scratch):
    d = os.path.join(scratch, 'template')
    p = env.run('run', os.path.join(HERE, 'big-campaign.yaml'), '--dir', d, '--campaign-id', 'tmpl', timeout=600)
    if p.returncode != 0:
        sys.exit('template campaign failed: ' + p.stderr[-500:])
    p = env.run('events', d, '--json')
    return [json.loads(line) for line in p.stdout.splitlines()]


def rename(value, offset):
    if isinstance(value, str):
        return CAND.sub(lambda m: 'c%03d' % (int(m.group(1)) + offset), value)
    if isinstance(value, list):
        return [rename(v, offset) for v in value]
    if isinstance(value, dict):
        return {k: rename(v, offset) for k, v in value.items()}
    return value


def grow(events, target):
    """The template with its tuning part repeated until `target` candidates were proposed."""
    first = next(i for i, e in enumerate(events) if e['type'] == 'ProposalRecorded')
    tune_end = next(i for i, e in enumerate(events) if e['type'] == 'StepFinished' and e['data'].get('step') == 'tune')
    prefix, body, suffix = events[:first], events[first:tune_end], events[tune_end:]
    per_cycle = sum(1 for e in body if e['type'] == 'ProposalRecorded' and not e['data'].get('done'))
    out = [dict(type=e['type'], v=e['v'], data=e['data']) for e in prefix]
    done = None
    proposed, cycle = 0, 0
    groups = []  # the events of each candidate after the first cycle, for the live part
    while proposed < target:
        offset = cycle * per_cycle
        for e in body:
            t, data = e['type'], e['data']
            if t == 'ProposalRecorded' and data.get('done'):
                done = e
                continue
            if cycle > 0 and t in ('LeaderChanged', 'SpeedupMeasured', 'PairedLossChecked'):
                continue
            data = rename(data, offset)
            if t == 'ProposalRecorded':
                if proposed >= target:
                    break
                proposed += 1
                data['index'] = data['index'] + offset
                groups.append([])
            if cycle > 0 and t == 'CandidateRanked' and data.get('outcome') == 'new_leader':
                data['outcome'] = 'within_noise'
            out.append(dict(type=t, v=e['v'], data=data))
            if cycle > 0:
                groups[-1].append(out[-1])
        cycle += 1
    if done:
        out.append(dict(type='ProposalRecorded', v=done['v'], data=done['data']))
    out += [dict(type=e['type'], v=e['v'], data=e['data']) for e in suffix if e['type'] != 'CampaignFinished']
    return out, per_cycle


def cpu_seconds(pid):
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def live_window(server, env, writer, camp_dir, next_events, clients, refetch, seconds):
    """Server CPU seconds while `clients` streams listen and the campaign grows."""
    stop = threading.Event()
    fetched = [0]
    errors = []

    def listener():
        s, _ = open_stream(server, '/api/campaigns/big/stream')
        s.settimeout(0.5)
        while not stop.is_set():
            try:
                chunk = s.recv(65536)
            except OSError:
                continue
            if not chunk:
                break
            if refetch and b'event: update' in chunk:
                try:
                    server.get('/api/campaigns/big', timeout=120)
                    fetched[0] += 1
                except OSError as e:
                    errors.append(str(e))
        s.close()

    threads = [threading.Thread(target=listener) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    before = cpu_seconds(server.proc.pid)
    start = time.time()
    appended = 0
    while time.time() - start < seconds:
        batch = next_events()
        writer.stdin.write('\n'.join(json.dumps(e) for e in batch) + '\n\n')
        writer.stdin.flush()
        appended += len(batch)
        time.sleep(0.2)
    elapsed = time.time() - start
    cpu = cpu_seconds(server.proc.pid) - before
    stop.set()
    for t in threads:
        t.join()
    if errors:
        print(f'  ({len(errors)} client errors: {errors[0]})')
    return cpu, elapsed, appended, fetched[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--attune', required=True)
    ap.add_argument('--writer', required=True)
    ap.add_argument('--plugins', default=os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), '..', '..', '..', 'build', 'plugins'))
    ap.add_argument('--candidates', type=int, default=10000)
    ap.add_argument('--clients', default='1,10,30')
    ap.add_argument('--seconds', type=float, default=15)
    ap.add_argument('--scratch', default='/dev/shm' if os.path.isdir('/dev/shm') else None)
    args = ap.parse_args()
    env = Env(os.path.abspath(args.attune), os.path.abspath(args.plugins), SOURCE)
    scratch = tempfile.mkdtemp(prefix='attune-serve-bench-', dir=args.scratch)
    try:
        events = template_events(env, scratch)
        grown, per_cycle = grow(events, args.candidates)
        root = os.path.join(scratch, 'root')
        camp = os.path.join(root, 'big')
        os.makedirs(root)
        t = time.time()
        p = subprocess.run([args.writer, camp, '--campaign-id', 'big'], input='\n'.join(json.dumps(e) for e in grown),
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit('writing the campaign failed: ' + p.stderr)
        print(f'campaign: {len(grown)} events written in {time.time() - t:.1f} s')
        t = time.time()
        st = env.status(camp)
        print(f'attune status: {st["candidates"]} candidates, {st["jobs"]} jobs, leader {st["leader"]}, '
              f'fold {time.time() - t:.2f} s')
        # Live growth: more candidates copied from the template's last cycle, renamed past the end.
        body = [e for e in grown if e['type'] in ('ProposalRecorded', 'GateChecked', 'JobRequested', 'JobSubmitted',
                                                   'JobFinished', 'CandidateRanked')]
        last_cycle_start = max(i for i, e in enumerate(body) if e['type'] == 'ProposalRecorded'
                               and e['data'].get('index') == args.candidates - per_cycle + 1) if args.candidates > per_cycle else 0
        cycle = body[last_cycle_start:]
        state = {'offset': per_cycle, 'pos': 0}

        def next_events():
            # one candidate's events, renamed one cycle further on
            out = []
            while True:
                e = cycle[state['pos']]
                if e['type'] == 'ProposalRecorded' and out:
                    break
                data = rename(e['data'], state['offset'])
                if e['type'] == 'ProposalRecorded':
                    data['index'] = e['data']['index'] + state['offset']
                out.append(dict(type=e['type'], v=e['v'], data=data))
                state['pos'] += 1
                if state['pos'] == len(cycle):
                    state['pos'] = 0
                    state['offset'] += per_cycle
                    break
            return out

        server = Server(env, root)
        # One writer that stays open, as a running campaign's engine does (it holds the lock).
        writer = subprocess.Popen([args.writer, camp, '--campaign-id', 'big'], stdin=subprocess.PIPE, text=True,
                                  stdout=subprocess.DEVNULL)
        try:
            t = time.time()
            status, _, body_bytes = server.get('/api/campaigns/big')
            first = time.time() - t
            t = time.time()
            server.get('/api/campaigns/big')
            cached = time.time() - t
            print(f'/api/campaigns/big: {len(body_bytes) / 1e6:.1f} MB, first answer {first * 1000:.0f} ms, '
                  f'cached {cached * 1000:.0f} ms')
            if cdp.find_chromium():
                with cdp.Browser() as b:
                    for attempt in range(2):
                        t = time.time()
                        b.open(server.url + '/campaign?name=big', timeout=120)
                        drawn = b.wait_for('document.querySelectorAll("#leaderboard tbody tr").length > 0 && '
                                           'document.querySelectorAll("#throughput canvas").length > 0', timeout=120)
                        paint = time.time() - t
                        points = b.evaluate('document.getElementById("throughput").dataset.points')
                        rows = b.evaluate('document.querySelectorAll("#leaderboard tbody tr").length')
                        kind = 'cold' if attempt == 0 else 'warm'
                        print(f'first paint ({kind}): {paint:.2f} s ({points} chart points, {rows} rows)'
                              + ('' if drawn is not None else ' TIMED OUT'))
                    b.screenshot(os.path.join(scratch, '..', 'attune-serve-bench.png'), full_page=False)
            else:
                print('first paint: chromium not installed, skipped')
            for refetch in (False, True):
                base_cpu, base_elapsed, _, _ = live_window(server, env, writer, camp, next_events, 0, refetch, args.seconds)
                print(f'{"re-reading" if refetch else "listening"} clients: 0 clients -> server CPU '
                      f'{100 * base_cpu / base_elapsed:.1f}% of a core (tailing, folding, rendering)')
                for k in [int(x) for x in args.clients.split(',')]:
                    cpu, elapsed, appended, fetched = live_window(server, env, writer, camp, next_events, k, refetch, args.seconds)
                    per = (cpu - base_cpu * elapsed / base_elapsed) / k
                    print(f'  {k:3d} clients: server CPU {100 * cpu / elapsed:5.1f}% of a core; '
                          f'{1000 * per / elapsed:6.2f} ms CPU per client per second'
                          + (f'; {fetched} page re-reads' if refetch else '') + f'; {appended} events appended')
        finally:
            writer.stdin.close()
            writer.wait()
            server.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == '__main__':
    main()
