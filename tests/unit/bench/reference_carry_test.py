#!/usr/bin/env python3
# tuner_bench's reference carries over from run to run: a shallow search given an earlier, deeper
# run's reference.json evaluates that run's best recipe again and reports it as its best; without
# it the shallow search's best is lower. Bad --reference files are refused with exit 2. The
# source tree's reference.json (the default) is read and holds the best recipe of every shipped
# scenario.
import argparse
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def bench(args, out):
    # No reference file unless the case gives one (the source tree's is the default).
    if '--reference' not in args:
        args = args + ['--reference', 'none']
    cmd = [ARGS.bench, '--exhaustive-only', '--out', out, '--workflow', WORKFLOW] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stderr


def best(out):
    with open(os.path.join(out, 'reference.json')) as f:
        entry = json.load(f)['scenarios']['sim-llama3-8b-h100x16']
    return entry['best_tps'], entry


parser = argparse.ArgumentParser()
parser.add_argument('--bench', required=True)
parser.add_argument('--data-dir', required=True)
ARGS = parser.parse_args()
WORKFLOW = os.path.join(ARGS.data_dir, 'workflows/examples/sim-llama3-8b-h100x16.yaml')

with tempfile.TemporaryDirectory(prefix='attune-bench-ref-') as tmp:
    deep, shallow, carried = (os.path.join(tmp, d) for d in ('deep', 'shallow', 'carried'))
    code, err = bench(['--depth', '2', '--max-states', '400'], deep)
    check(code == 0, f'deep run: exit {code}: {err[-800:]}')
    deep_best, entry = best(deep)
    check(entry['best_tps'] > entry['baseline_tps'] > 0 and entry['recipe'].get('stack') == 'megatron',
          f'deep run: reference.json holds the best recipe and both rates: {entry}')
    code, err = bench(['--depth', '1', '--max-states', '20'], shallow)
    check(code == 0, f'shallow run: exit {code}: {err[-800:]}')
    shallow_best, _ = best(shallow)
    check(shallow_best < deep_best, f'the shallow search alone finds less: {shallow_best} vs {deep_best}')
    ref = os.path.join(deep, 'reference.json')
    code, err = bench(['--depth', '1', '--max-states', '20', '--reference', ref], carried)
    check(code == 0, f'carried run: exit {code}: {err[-800:]}')
    carried_best, _ = best(carried)
    check(abs(carried_best - deep_best) <= 1e-6 * deep_best,
          f'the carried recipe, evaluated again, is the best: {carried_best} vs {deep_best}')
    check('carried from --reference raised the best' in err, f'carried run says so: {err[-800:]}')
    # Bad reference files: refused before any work, naming the file.
    bad = os.path.join(tmp, 'bad.json')
    for text, words in (('{"x": 1}', 'expected a reference.json'),
                        ('{"scenarios": {"s": {"recipe": 3}}}', 'scenario s: its recipe is missing')):
        with open(bad, 'w') as f:
            f.write(text)
        code, err = bench(['--reference', bad], os.path.join(tmp, 'bad'))
        check(code == 2 and bad in err and words in err, f'bad reference {text}: exit {code}: {err}')
    code, err = bench(['--reference', os.path.join(tmp, 'absent.json')], os.path.join(tmp, 'bad'))
    check(code == 2 and 'cannot read it' in err, f'absent reference: exit {code}: {err}')

# The committed reference file: every shipped scenario has an entry, and it is the default.
with open(os.path.join(ARGS.data_dir, 'tools/bench/tuners/reference.json')) as f:
    known = json.load(f)['scenarios']
for d in ('workflows/examples', 'tools/bench/tuners/probes'):
    for name in sorted(os.listdir(os.path.join(ARGS.data_dir, d))):
        if name.startswith('sim-') and name.endswith('.yaml'):
            check(name[:-5] in known, f'tools/bench/tuners/reference.json has no entry for {d}/{name}')
with tempfile.TemporaryDirectory(prefix='attune-bench-ref-') as tmp:
    r = subprocess.run([ARGS.bench, '--exhaustive-only', '--out', tmp, '--workflow', WORKFLOW,
                        '--depth', '1', '--max-states', '20', '--data-dir', ARGS.data_dir],
                       capture_output=True, text=True, timeout=600)
    check(r.returncode == 0 and 'carried from --reference raised the best' in r.stderr,
          f'the committed reference.json is read by default: exit {r.returncode}: {r.stderr[-800:]}')

if failures:
    print(f'{len(failures)} check(s) failed')
    sys.exit(1)
print('reference carry-over: all checks passed')
