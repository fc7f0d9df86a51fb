#!/usr/bin/python3
"""The campaign's profile step on a slime recipe: the local launcher runs the slime stand-in
(tools/slime/slime_standin.py, which profiles as slime's TrainProfiler does), and the step analyses
the trace it wrote.

Checks: the profiled job ran the benchmark form plus slime's profiling settings only
(--use-pytorch-profiler, --profile-target train_overall, a one-rollout window inside the run,
--tensorboard-dir = the recorded trace folder; none of Megatron's --profile / --profile-ranks,
which slime does not read), one trace named like slime's is in that folder, the recorded analysis
has no error and one bar, and the report shows it.

    slime_profile_test.py --attune BIN --plugins DIR --source SRC
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from profile_checks import check, events_by_type, finish, parse_args


def main():
    args = parse_args()
    scratch = tempfile.mkdtemp(prefix='attune-slime-profile-')
    # The slime stack renders `ray job submit ... -- python3 train.py ...`; no Ray here, so a shim
    # `ray` runs what follows `--` as the job, which is what Ray's job submission does.
    shim_dir = os.path.join(scratch, 'bin')
    os.makedirs(shim_dir)
    with open(os.path.join(shim_dir, 'ray'), 'w') as f:
        f.write('#!/bin/sh\nwhile [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n')
    os.chmod(os.path.join(shim_dir, 'ray'), 0o755)
    env = dict(os.environ, ATTUNE_PLUGIN_PATH=args.plugins, ATTUNE_DATA_DIR=args.source,
               PATH=shim_dir + os.pathsep + os.environ['PATH'])
    try:
        camp = os.path.join(scratch, 'campaign')
        workflow = os.path.join(args.source, 'tests/integration/profile/slime-profile.yaml')
        p = subprocess.run([args.attune, 'run', workflow, '--dir', camp], cwd=args.source, env=env,
                           capture_output=True, text=True, timeout=300)
        print(p.stdout[-1500:], flush=True)
        if not check(p.returncode == 0, f'attune run: exit {p.returncode} {p.stderr[-1500:]}'):
            return 1
        by_type = events_by_type(args.attune, camp, env)
        steps = {d['step']: d['outcome'] for d in by_type.get('StepFinished', [])}
        check(steps.get('baseline') == 'done' and steps.get('profile') == 'done',
              f'baseline and profile steps done: {steps}')

        profiled = [d for d in by_type.get('JobRequested', []) if d['purpose'] == 'profile']
        if not check(len(profiled) == 1, f'one profiled job: {profiled}'):
            return 1
        job = profiled[0]
        trace_dir = job.get('trace_dir', '')
        changes = {c['key']: c['to'] for c in job['benchmark_changes']}
        check(os.path.isabs(trace_dir) and trace_dir.startswith(camp), f'trace_dir in the campaign: {trace_dir}')
        expected = {'--use-pytorch-profiler': '', '--profile-target': 'train_overall',
                    '--tensorboard-dir': trace_dir}
        check(all(changes.get(k) == v for k, v in expected.items()),
              f'the profiled form adds slime\'s profiling settings: {changes}')
        check('--profile' not in changes and '--profile-ranks' not in changes,
              f'no Megatron-loop profiling flags (slime does not read them): {sorted(changes)}')
        start, end = int(changes.get('--profile-step-start', -1)), int(changes.get('--profile-step-end', -1))
        rollouts = 4  # standin-recipe.yaml's --num-rollout, kept by the benchmark form (LR not pinned)
        check(0 < start and end == start + 1 and end <= rollouts,
              f'one traced rollout after warm-up, inside the {rollouts}-rollout run: [{start}, {end})')
        allowed = set(expected) | {'--profile-step-start', '--profile-step-end'}
        check(set(changes) <= allowed, f'only profiling settings change: {sorted(changes)}')

        traces = sorted(f for _, _, fs in os.walk(trace_dir) for f in fs if f.endswith('.json.gz'))
        check(len(traces) == 1 and traces[0].startswith('train_overall_rank_0.'),
              f'one trace, named as slime names it, in {trace_dir}: {traces}')
        analyses = by_type.get('ProfileAnalyzed', [])
        if not check(len(analyses) == 1 and not analyses[0].get('error'), f'one analysis, no error: {analyses}'):
            return 1
        recorded = analyses[0]
        check(recorded['job'] == job['job'] and recorded['traces'] == 1, f'the analysis is of the job: {recorded}')
        check(len(recorded.get('bars', [])) == 1 and recorded['bars'][0]['window_ns'] > 0,
              f'one bar with a window: {recorded.get("bars")}')
        text = open(os.path.join(camp, 'REPORT.md')).read()
        check('## Profile' in text, 'REPORT.md has the profile section')
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return finish('slime profile')


if __name__ == '__main__':
    sys.exit(main())
