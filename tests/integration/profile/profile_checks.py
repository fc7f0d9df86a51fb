"""What the profile step's integration tests share: their arguments, the failure list, reading a
campaign's events by type, and the exit status."""
import argparse
import json
import subprocess

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print('  FAIL: ' + what, flush=True)
    return cond


def parse_args(more=None):
    """--attune BIN --plugins DIR --source SRC, plus what `more(parser)` adds."""
    ap = argparse.ArgumentParser()
    ap.add_argument('--attune', required=True)
    ap.add_argument('--plugins', required=True)
    ap.add_argument('--source', required=True)
    if more:
        more(ap)
    return ap.parse_args()


def events_by_type(attune, camp, env):
    """The campaign's events ({type: [data, ...]} in log order), read with `attune events`."""
    p = subprocess.run([attune, 'events', camp, '--json'], env=env, capture_output=True, text=True)
    by_type = {}
    for line in p.stdout.splitlines():
        if line.strip():
            e = json.loads(line)
            by_type.setdefault(e['type'], []).append(e['data'])
    return by_type


def finish(what):
    """The exit status: 1 when a check failed, else 0 (and says so)."""
    if FAILURES:
        print(f'{len(FAILURES)} check(s) failed')
        return 1
    print(f'all {what} checks passed')
    return 0
