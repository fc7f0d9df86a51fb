#!/usr/bin/python3
"""The profile step on the KubeRay launcher, against the Kubernetes API server test double.

The double runs each RayJob's entrypoint as a local process, so the profiled minigpt job does write
its traces where it was told; what decides whether the engine reads them is the launcher's answer
to FetchFiles (docs/kuberay.md, "Files a job writes"):

  - with a pvc/host_path volume mounted at a folder above the campaign (storage this machine
    shares with the pods), the traces are read in place: the step is `done`, two ranks analysed;
  - without one, a real cluster's pods would have written into their own file system, so the
    step ends `no_traces` and its recorded error names the `volumes` requirement.

Exit 77 (skipped) without kubectl or the double's Python packages.

    kuberay_profile_test.py --attune BIN --plugins DIR --source SRC
"""
import os
import shutil
import subprocess
import sys
import tempfile

from profile_checks import check, events_by_type, finish, parse_args


WORKFLOW = """attune: 1
name: kuberay-profile
stack: megatron
recipe: {recipe}
launcher:
  name: kuberay
  with: {{namespace: team-a, image: "rayproject/ray:2.9.0-py310", poll_interval_s: 0.3,
         ttl_seconds_after_finished: 2, request_timeout_s: 10, api_backoff_s: 0.5{volumes}}}
agent: heuristic
seed: 7
budget: {{gpu_hours: 0.5, max_candidates: 1, job_time_limit_s: 120}}
measure: {{noise_band: 0.05, repeats: 1}}
gate: {{loss_rel_tolerance: 0.001, paired_losses: 4}}
steps:
  - {{id: baseline, uses: benchmark, with: {{repeats: 1}}}}
  - {{id: profile, uses: profile}}
  - {{id: report, uses: report}}
"""


def run_campaign(args, env, scratch, name, volumes):
    workflow = os.path.join(scratch, name + '.yaml')
    recipe = os.path.join(args.source, 'tests/integration/profile/minigpt-tiny.yaml')
    with open(workflow, 'w') as f:
        f.write(WORKFLOW.format(recipe=recipe, volumes=volumes))
    camp = os.path.join(scratch, name)
    p = subprocess.run([args.attune, 'run', workflow, '--dir', camp], cwd=args.source, env=env,
                       capture_output=True, text=True, timeout=400)
    print(p.stdout[-1200:], flush=True)
    check(p.returncode == 0, f'{name}: attune run exit {p.returncode} {p.stderr[-1500:]}')
    return camp, events_by_type(args.attune, camp, env)


def main():
    def more(ap):
        ap.add_argument('--kubectl', default=os.environ.get('ATTUNE_KUBECTL', 'kubectl'))
        ap.add_argument('--shared', default=os.environ.get('ATTUNE_SHARED_DIR'))
    args = parse_args(more)
    args.attune = os.path.abspath(args.attune)
    args.source = os.path.abspath(args.source)
    args.shared = args.shared or os.path.join(args.source, '..', 'shared')
    sys.path.insert(0, os.path.join(args.source, 'tests', 'integration', 'kuberay'))
    import crash_kuberay  # noqa: E402  (start_double)

    scratch = os.path.realpath(tempfile.mkdtemp(prefix='attune-kuberay-profile-'))
    state = os.path.join(scratch, 'double')
    os.makedirs(state)
    # The double runs the entrypoints with this environment: torchrun needs the shim on Debian's
    # torch (tools/minigpt/README.md).
    os.environ['PATH'] = os.path.join(args.source, 'tools/minigpt/bin') + os.pathsep + os.environ['PATH']
    proc, kubeconfig = crash_kuberay.start_double(args, state)
    try:
        env = dict(os.environ, KUBECONFIG=kubeconfig, ATTUNE_PLUGIN_PATH=args.plugins,
                   ATTUNE_DATA_DIR=args.source)
        kubectl_dir = os.path.dirname(os.path.abspath(shutil.which(args.kubectl) or args.kubectl))
        env['PATH'] = kubectl_dir + os.pathsep + env['PATH']

        volume = (',\n         volumes: [{name: campaigns, host_path: "%s", mount_path: "%s"}]' % (scratch, scratch))
        camp, ev = run_campaign(args, env, scratch, 'shared', volume)
        steps = {d['step']: d['outcome'] for d in ev.get('StepFinished', [])}
        check(steps.get('profile') == 'done', f'shared volume: the profile step is done: {steps}')
        analyses = ev.get('ProfileAnalyzed', [])
        check(len(analyses) == 1 and not analyses[0].get('error') and analyses[0].get('traces') == 2,
              f'shared volume: two ranks analysed: {analyses}')
        check('## Profile' in open(os.path.join(camp, 'REPORT.md')).read(), 'shared volume: REPORT.md shows it')
        # A replay works from the record: with the traces gone, running the finished campaign again
        # and folding it again keep the same single analysis (nothing is fetched or read again).
        for a in analyses:
            shutil.rmtree(os.path.join(camp, 'jobs', a['job'], 'traces'), ignore_errors=True)
        again, ev2 = run_campaign(args, env, scratch, 'shared', volume)
        check(ev2.get('ProfileAnalyzed') == analyses, f'replayed: the recorded analysis stands: {ev2.get("ProfileAnalyzed")}')
        check(len(ev2.get('JobRequested', [])) == len(ev.get('JobRequested', [])), 'replayed: no job requested again')

        camp, ev = run_campaign(args, env, scratch, 'unshared', '')
        steps = {d['step']: d['outcome'] for d in ev.get('StepFinished', [])}
        check(steps.get('profile') == 'no_traces', f'no volume: the profile step says no_traces: {steps}')
        analyses = ev.get('ProfileAnalyzed', [])
        error = analyses[0].get('error', '') if analyses else ''
        check(len(analyses) == 1 and 'kuberay launcher cannot bring' in error and 'volumes' in error
              and 'docs/kuberay.md' in error, f'no volume: the error names the requirement: {error}')
    finally:
        subprocess.run([crash_kuberay.PYTHON, os.path.join(crash_kuberay.DOUBLE, 'double_ctl.py'), state, 'stop'])
        proc.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    return finish('kuberay profile')


if __name__ == '__main__':
    sys.exit(main())
