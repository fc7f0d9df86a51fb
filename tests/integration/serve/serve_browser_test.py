#!/usr/bin/python3
"""`attune serve` and report.html in a real browser: Debian's chromium, headless, driven over the
DevTools pipe (cdp.py).

  1. the campaign page of a finished sim campaign: its leaderboard rows are the candidates of
     `attune status --json` plus the baseline, with the same leader; the chart has one point per
     finished tuning run; hovering the leader's run shows its candidate and lever; clicking a row
     shows the candidate's gate verdict; no script error; screenshots saved as artifacts;
  2. live: a campaign killed half way is shown as interrupted; `attune run` resumes it and the page
     shows its last event and "finished" within 2 s of the run's end;
  3. report.html opens from file:// with the network off and shows the same leaderboard and points.

Exit 77 (skipped) when chromium is not installed.

    serve_browser_test.py --attune BIN --plugins DIR --source SRC --artifacts DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import cdp
from serve_util import FAILURES, Env, Server, check


def tuning_runs(env, directory):
    """Finished baseline and candidate jobs, from the event log itself."""
    p = env.run('events', directory, '--json')
    purpose = {}
    finished = 0
    for line in p.stdout.splitlines():
        e = json.loads(line)
        if e['type'] == 'JobRequested':
            purpose[e['data']['job']] = e['data'].get('purpose')
        elif e['type'] == 'JobFinished' and purpose.get(e['data']['job']) in ('baseline', 'candidate'):
            finished += 1
    return finished


def check_page(b, env, directory, label):
    st = env.status(directory)
    rows = b.evaluate('[...document.querySelectorAll("#leaderboard tbody tr")].map(r => r.dataset.candidate)')
    check(len(rows) == st['candidates'] + 1, f'{label}: {len(rows)} leaderboard rows = {st["candidates"]} candidates + baseline')
    leader = b.evaluate('[...document.querySelectorAll("#leaderboard tbody tr.leader")].map(r => r.dataset.candidate)')
    check(leader == [st['leader']], f'{label}: the marked leader {leader} is attune status\'s {st["leader"]}')
    points = int(b.evaluate('document.getElementById("throughput").dataset.points'))
    runs = tuning_runs(env, directory)
    check(points == runs, f'{label}: the chart has one point per finished tuning run ({points} vs {runs})')
    drawn = b.evaluate('window.attuneCharts && window.attuneCharts[0] ? window.attuneCharts[0].data.slice(2)'
                       '.reduce((n, s) => n + s.filter(v => v !== null).length, 0) : -1')
    check(drawn == runs, f'{label}: uPlot holds {drawn} points')
    check(b.evaluate('document.querySelectorAll("#throughput canvas").length') >= 1, f'{label}: the chart is drawn')
    tree = b.evaluate('document.querySelectorAll("#tree li").length')
    check(tree == st['candidates'] + 1, f'{label}: candidate tree has {tree} nodes')


def hover_leader(b, st):
    """Moves the mouse onto the leader's run; the tooltip must name it and its lever."""
    pos = b.evaluate('''(() => {
      const u = window.attuneCharts[0];
      const runs = u.data[0];
      for (let s = 2; s < u.data.length; s++) for (let i = 0; i < runs.length; i++) {
        const v = u.data[s][i];
        if (v === null) continue;
        const r = u.over.getBoundingClientRect();
        const x = r.left + u.valToPos(runs[i], "x"), y = r.top + u.valToPos(v, "y");
        if (u.series[s].label === "new leader") return {x, y, i};
      }
      return null; })()''')
    if not check(pos is not None, 'the chart has a new-leader point to hover'):
        return
    b.call('Input.dispatchMouseEvent', session=True, type='mouseMoved', x=pos['x'], y=pos['y'])
    time.sleep(0.3)
    tip = b.evaluate('document.getElementById("tip").innerText')
    check(tip and 'lever:' in tip and 'verdict: new_leader' in tip, f'hovering a point shows its candidate, lever, change, verdict: {tip!r}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--attune', required=True)
    ap.add_argument('--plugins', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--artifacts', required=True)
    args = ap.parse_args()
    if not cdp.find_chromium():
        print('SKIP: chromium is not installed (tools/setup.sh installs it)')
        return 77
    env = Env(args.attune, args.plugins, args.source)
    os.makedirs(args.artifacts, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix='attune-browser-')
    try:
        root = os.path.join(scratch, 'root')
        done, half = os.path.join(root, 'done'), os.path.join(root, 'group', 'half')
        check(env.campaign(done).returncode == 0, 'sim campaign finished')
        check(env.campaign(half, extra_env={'ATTUNE_CRASH_AT': 'log.append.after:25'}).returncode != 0,
              'second campaign killed half way')
        server = Server(env, root)
        try:
            with cdp.Browser() as b:
                b.open(server.url + '/')
                waited = b.wait_for('document.querySelectorAll("#campaigns tbody tr").length === 2', timeout=10)
                check(waited is not None, 'the campaigns list shows both campaigns')
                states = b.evaluate('Object.fromEntries([...document.querySelectorAll("#campaigns tbody tr")].map(r => [r.dataset.name, r.querySelector(".badge").textContent]))')
                check(states == {'done': 'finished', 'group/half': 'interrupted'}, f'states in the list: {states}')
                b.screenshot(os.path.join(args.artifacts, 'campaigns.png'))

                start = time.time()
                b.open(server.url + '/campaign?name=done')
                waited = b.wait_for('document.querySelectorAll("#leaderboard tbody tr").length > 0 && '
                                    'document.querySelectorAll("#throughput canvas").length > 0', timeout=10)
                check(waited is not None, f'campaign page drawn ({time.time() - start:.2f} s after navigation)')
                check_page(b, env, done, 'served page')
                st = env.status(done)
                hover_leader(b, st)
                b.evaluate(f'document.querySelector(\'#leaderboard tr[data-candidate="{st["leader"]}"]\').click()')
                gate = b.wait_for('document.getElementById("gate") && document.getElementById("gate").textContent.startsWith("pass")', timeout=5)
                check(gate is not None, 'clicking the leader shows its gate verdict')
                logs = b.wait_for('[...document.querySelectorAll("#jobs pre")].some(p => p.textContent.length > 20)', timeout=5)
                check(logs is not None, 'and its jobs\' log tails')
                b.screenshot(os.path.join(args.artifacts, 'campaign.png'))
                check(not b.exceptions, f'no script error: {b.exceptions}')

                # Live: the interrupted campaign resumes while the page is open.
                b.open(server.url + '/campaign?name=' + 'group%2Fhalf')
                check(b.wait_for('document.getElementById("state") && document.getElementById("state").textContent === "interrupted"', timeout=10) is not None,
                      'the killed campaign shows as interrupted')
                check(b.wait_for('document.getElementById("live").textContent === "live"', timeout=5) is not None,
                      'the page is connected to its event stream')
                before = int(b.evaluate('document.getElementById("seq").textContent'))
                p = env.campaign(half)
                ended = time.time()
                check(p.returncode == 0, 'the campaign resumed and finished')
                last = env.event_count(half)
                waited = b.wait_for(f'document.getElementById("seq") && document.getElementById("seq").textContent === "{last}" && '
                                    'document.getElementById("state").textContent === "finished"', timeout=5)
                latency = time.time() - ended
                check(waited is not None and latency <= 2.0,
                      f'the page shows event {last} (from {before}) and "finished" {latency:.2f} s after the run ended (limit 2 s)')
                st = env.status(half)
                runs = tuning_runs(env, half)
                drawn = b.wait_for(f'document.querySelectorAll("#leaderboard tbody tr").length === {st["candidates"] + 1} && '
                                   f'document.getElementById("throughput").dataset.points === "{runs}"', timeout=5)
                latency = time.time() - ended
                check(drawn is not None and latency <= 2.5,
                      f'its charts and tables follow {latency:.2f} s after the run ended (limit 2 s, plus the status calls above)')
                check_page(b, env, half, 'live page')
                b.screenshot(os.path.join(args.artifacts, 'live.png'))
                check(not b.exceptions, f'no script error: {b.exceptions}')
        finally:
            server.stop()

        # report.html from disk, with the network off.
        with cdp.Browser(offline=True) as b:
            b.open('file://' + os.path.join(done, 'report.html'))
            waited = b.wait_for('document.querySelectorAll("#leaderboard tbody tr").length > 0', timeout=10)
            check(waited is not None, 'report.html draws from file:// offline')
            check_page(b, env, done, 'report.html')
            resources = b.evaluate('performance.getEntriesByType("resource").map(e => e.name)')
            check(resources == [], f'report.html loads nothing: {resources}')
            check(not b.exceptions, f'no script error in report.html: {b.exceptions}')
            b.screenshot(os.path.join(args.artifacts, 'report-html.png'))
            b.open('file://' + os.path.join(done, 'throughput.svg'))
            b.screenshot(os.path.join(args.artifacts, 'throughput-svg.png'))
        print('screenshots in ' + args.artifacts)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if FAILURES:
        print(f'{len(FAILURES)} check(s) failed', flush=True)
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
