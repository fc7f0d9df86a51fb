#!/usr/bin/python3
"""The campaign's profile step, for real: a tiny minigpt on two ranks (torchrun, gloo) through the
local launcher. The baseline is measured, then one profiled run of the leader writes a real
torch.profiler trace per rank, the traces are analysed and the analysis recorded (ProfileAnalyzed),
and the report shows the per-rank breakdown (REPORT.md, profile.svg).

Checks: the profiled job ran the benchmark form plus Megatron's profiling flags only, its traces
are in the recorded folder, the recorded analysis equals `attune profile analyze` of those traces,
the report shows it, and the profile is not a tuning run (its throughput ranks nothing).

    profile_campaign_test.py --attune BIN --plugins DIR --source SRC
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
    env = dict(os.environ, ATTUNE_PLUGIN_PATH=args.plugins, ATTUNE_DATA_DIR=args.source,
               # Debian's torch 1.13 torchrun needs the shim (tools/minigpt/README.md).
               PATH=os.path.join(args.source, 'tools/minigpt/bin') + os.pathsep + os.environ['PATH'])
    scratch = tempfile.mkdtemp(prefix='attune-profile-')
    try:
        camp = os.path.join(scratch, 'campaign')
        workflow = os.path.join(args.source, 'tests/integration/profile/profile-campaign.yaml')
        p = subprocess.run([args.attune, 'run', workflow, '--dir', camp], cwd=args.source, env=env,
                           capture_output=True, text=True, timeout=600)
        print(p.stdout[-1500:], flush=True)
        if not check(p.returncode == 0, f'attune run: exit {p.returncode} {p.stderr[-1500:]}'):
            return 1
        by_type = events_by_type(args.attune, camp, env)
        steps = {d['step']: d['outcome'] for d in by_type.get('StepFinished', [])}
        check(steps.get('baseline') == 'done' and steps.get('profile') == 'done',
              f'baseline and profile steps done: {steps}')

        profiled = [d for d in by_type.get('JobRequested', []) if d['purpose'] == 'profile']
        check(len(profiled) == 1, f'one profiled job: {profiled}')
        job = profiled[0]
        trace_dir = job.get('trace_dir', '')
        changes = {c['key']: c['to'] for c in job['benchmark_changes']}
        check(os.path.isabs(trace_dir) and trace_dir.startswith(camp), f'trace_dir in the campaign: {trace_dir}')
        expected = {'--profile': '', '--use-pytorch-profiler': '', '--profile-ranks': '0 1',
                    '--tensorboard-dir': trace_dir}
        check(all(changes.get(k) == v for k, v in expected.items()),
              f'the profiled form adds Megatron\'s profiling flags: {changes}')
        start, end = int(changes.get('--profile-step-start', -1)), int(changes.get('--profile-step-end', -1))
        check(0 < start < end <= 6, f'the profiling window lies inside the 6-iteration run: [{start}, {end})')
        allowed = set(expected) | {'--profile-step-start', '--profile-step-end'}
        check(set(changes) <= allowed, f'only profiling flags change (the run is short already): {sorted(changes)}')

        traces = sorted(os.path.join(r, f) for r, _, fs in os.walk(trace_dir) for f in fs if f.endswith('.json'))
        check(len(traces) == 2, f'one trace per rank in {trace_dir}: {traces}')
        analyses = by_type.get('ProfileAnalyzed', [])
        if not check(len(analyses) == 1 and not analyses[0].get('error'), f'one analysis, no error: {analyses}'):
            return 1
        recorded = analyses[0]
        check(recorded['job'] == job['job'] and recorded['traces'] == 2, f'the analysis is of the job: {recorded}')
        p = subprocess.run([args.attune, 'profile', 'analyze', trace_dir, '--json'], env=env,
                           capture_output=True, text=True)
        report = json.loads(p.stdout) if p.returncode == 0 else {}
        cli_kinds = [d['kind'] for d in report.get('diagnoses', [])]
        check(cli_kinds and [d['kind'] for d in recorded['diagnoses']] == cli_kinds,
              f'the recorded diagnosis is the analyser\'s: {recorded["diagnoses"]} vs {cli_kinds}')
        labels = [b['label'] for b in recorded['bars']]
        check(labels == ['rank 0', 'rank 1'], f'a bar per rank: {labels}')
        for bar, rank in zip(recorded['bars'], report.get('ranks', [])):
            parts = sum(bar[k] for k in ('compute_ns', 'exposed_communication_ns', 'memory_only_ns',
                                         'launch_bound_idle_ns', 'other_idle_ns'))
            check(bar['window_ns'] > 0 and parts == bar['window_ns'], f'the parts add up to the window: {bar}')
            check(abs(bar['window_ns'] / 1000 - rank['window_us']) < 1, f'the window is the analyser\'s: {bar} {rank}')

        text = open(os.path.join(camp, 'REPORT.md')).read()
        check('## Profile' in text and '| rank 0 |' in text and '| rank 1 |' in text,
              'REPORT.md shows the per-rank breakdown')
        svg = os.path.join(camp, 'profile.svg')
        check(os.path.isfile(svg) and open(svg).read().startswith('<svg'), 'profile.svg is written')
        tuning = [d for d in by_type.get('CandidateRanked', [])]
        check(not tuning, f'nothing was ranked by the profiled run: {tuning}')

        p = subprocess.run([args.attune, 'verify', camp], env=env, capture_output=True, text=True)
        check(p.returncode == 0, f'attune verify: the log with ProfileAnalyzed is sound: {p.stdout[-300:]}')
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return finish('profile campaign')


if __name__ == '__main__':
    sys.exit(main())
