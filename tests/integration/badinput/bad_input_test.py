#!/usr/bin/python3
"""Issue 15's bad inputs through the real `attune`: each is refused (or survived) with the exit
code docs/cli.md gives, a message that says where and what, and a campaign that was never created
or can go on.

    bad_input_test.py --attune BUILD/bin/attune --source REPO --test-plugins BUILD/test-plugins
"""
import argparse
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ARGS = None
FAILURES = []
SCRATCH = None


def attune(*args, env=None, timeout=300):
    full_env = dict(os.environ)
    full_env.update(env or {})
    p = subprocess.run([ARGS.attune, *args], capture_output=True, text=True, timeout=timeout,
                       env=full_env, errors='replace', cwd=SCRATCH)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print('  FAIL: ' + what)


def write(name, text):
    path = os.path.join(SCRATCH, name)
    with open(path, 'w') as f:
        f.write(text)
    return path


def base_workflow():
    """The small sim example, with its recipe path made absolute."""
    src = os.path.join(ARGS.source, 'workflows', 'examples', 'sim-llama3-8b-h100x16.yaml')
    text = open(src).read()
    recipe = os.path.join(ARGS.source, 'workflows', 'examples', 'recipes', 'llama3-8b-a100x8.yaml')
    return re.sub(r'^recipe: .*$', 'recipe: ' + recipe, text, flags=re.M)


def events(campaign):
    code, out, _ = attune('events', '--dir', campaign, '--json')
    assert code == 0, 'attune events failed on ' + campaign
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def refused_at_the_door(name, text, message, line=None):
    """validate and run both exit 2 with `message`; run creates no campaign; the fixed file runs."""
    print(name)
    path = write(name + '.yaml', text)
    code, out, err = attune('validate', path)
    check(code == 2, f'{name}: validate exit {code}, expected 2 ({err.strip()})')
    check(message in err, f'{name}: validate said {err.strip()!r}, expected {message!r}')
    if line is not None:
        check(f'{name}.yaml:{line}:' in err, f'{name}: no position {line} in {err.strip()!r}')
    campaign = os.path.join(SCRATCH, 'c-' + name)
    code, out, err = attune('run', path, '--dir', campaign)
    check(code == 2, f'{name}: run exit {code}, expected 2')
    check(message in err, f'{name}: run said {err.strip()!r}')
    check(not os.path.exists(campaign), f'{name}: run created {campaign} for an invalid workflow')
    # Fixed, the same command runs to the end.
    fixed = write(name + '.yaml', base_workflow())
    code, out, err = attune('run', fixed, '--dir', campaign)
    check(code == 0 and 'campaign finished' in out, f'{name}: the fixed workflow did not run ({err})')


def test_table_rows_refused_at_the_door():
    wf = base_workflow()
    refused_at_the_door('step_option_type', wf.replace('with: {repeats: 3}}', 'with: {repeats: three}}', 1),
                        "steps[0].with.repeats: expected an integer in [1, 100], found 'three'", 18)
    refused_at_the_door('misspelt_if', wf.replace("if: \"leader != 'baseline'\"", 'if: "leadr_changed"'),
                        "steps[2].if: unknown name 'leadr_changed' (did you mean 'leader_changed'?)")
    for key, value, path in [('gpu_hours: 60', 'gpu_hours: .inf', 'budget.gpu_hours'),
                             ('noise_band: 0.03', 'noise_band: .nan', 'measure.noise_band'),
                             ('loss_rel_tolerance: 0.02', 'loss_rel_tolerance: .nan',
                              'gate.loss_rel_tolerance'),
                             ('job_time_limit_s: 1800', 'job_time_limit_s: .inf',
                              'budget.job_time_limit_s')]:
        refused_at_the_door('nonfinite_' + path.replace('.', '_'), wf.replace(key, value),
                            f"{path}: expected a finite number, found '{value.split(': ')[1]}'")
    refused_at_the_door('nonfinite_repeats', wf.replace('measure: {noise_band: 0.03, repeats: 1}',
                                                        'measure: {noise_band: 0.03, repeats: .nan}'),
                        "measure.repeats: expected an integer, found '.nan'")
    refused_at_the_door('nonfinite_step_option', wf.replace('with: {repeats: 3}}', 'with: {repeats: -.inf}}', 1),
                        "'-.inf' is not a finite number")
    refused_at_the_door('launcher_typo', wf.replace('startup_s: 120', 'startup_sec: 120'),
                        "launcher.with.startup_sec: unknown key 'startup_sec' (did you mean 'startup_s'?)")
    refused_at_the_door('agent_option_type', wf.replace('agent: heuristic',
                                                        'agent: {name: heuristic, with: {pair_after_oom: maybe}}'),
                        "agent.with.pair_after_oom: expected true or false, found 'maybe'")
    refused_at_the_door('duplicate_seed', wf.replace('seed: 1\n', 'seed: 1\nseed: 2\n'),
                        "duplicate key 'seed' (first given at line 13, column 1)")
    refused_at_the_door('duplicate_inline', wf.replace('gpu_hours: 60,', 'gpu_hours: 60, gpu_hours: 10,'),
                        "duplicate key 'gpu_hours'")
    refused_at_the_door('tab_indent', wf.replace('\n  name: sim', '\n\tname: sim'),
                        'a tab character indents this line')


def test_alias_bomb_and_depth():
    print('alias bomb')
    lines, prev = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'], 'a'
    for name in 'bcdefghi':
        lines.append(f'{name}: &{name} [' + ','.join([f'*{prev}'] * 9) + ']')
        prev = name
    bomb = write('bomb.yaml', '\n'.join(lines) + '\n')
    check(os.path.getsize(bomb) < 800, 'the bomb is small')
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    code, _, err = attune('validate', bomb)
    seconds = time.monotonic() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    check(code == 2, f'bomb: exit {code}')
    check('expands to more than' in err and 'aliases' in err, f'bomb: said {err.strip()!r}')
    check(seconds < 10, f'bomb: took {seconds:.1f} s')
    check(peak_kib < 100 * 1024 or before >= peak_kib, f'bomb: peak RSS {peak_kib} KiB')
    print(f'  refused in {seconds:.2f} s, peak RSS of children {peak_kib / 1024:.0f} MiB')
    deep = write('deep.yaml', 'attune: 1\nx: ' + '[' * 100 + ']' * 100 + '\n')
    code, _, err = attune('validate', deep)
    check(code == 2 and 'nesting is deeper than 64 levels' in err, f'depth: {code} {err.strip()!r}')
    deeper = write('deeper.yaml', 'x: ' + '[' * 5000 + ']' * 5000 + '\n')
    code, _, err = attune('validate', deeper)
    check(code == 2 and 'too deep to read' in err, f'deeper: {code} {err.strip()!r}')
    code, _, err = attune('validate', SCRATCH)
    check(code == 2 and 'is a directory' in err, f'directory: {code} {err.strip()!r}')


def test_one_megabyte_workflow_stays_small():
    print('1 MB workflow')
    wf = base_workflow()
    # A valid workflow padded with a megabyte of comments and a long list inside an agent option
    # would be refused by the schema; comments are what a large real file holds.
    padding = ''.join(f'# padding line {i:07d} ' + 'x' * 40 + '\n' for i in range(17000))
    path = write('big.yaml', padding + wf)
    check(os.path.getsize(path) > 1_000_000, 'the file is over 1 MB')
    code, _, err = attune('validate', path)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    check(code == 0, f'big: exit {code} {err}')
    check(peak_kib < 100 * 1024, f'big: peak RSS {peak_kib} KiB')
    print(f'  validated, peak RSS of children so far {peak_kib / 1024:.0f} MiB')
    # A megabyte of values (not comments): refused while parsing, before yaml-cpp's tree exists.
    many = write('many.yaml', 'x: [' + '1,' * 520000 + '1]\n')
    code, _, err = attune('validate', many)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    check(code == 2 and 'holds more than 100000 values' in err, f'many: {code} {err.strip()!r}')
    check(peak_kib < 100 * 1024, f'many: peak RSS {peak_kib} KiB')
    # Just under the limit, a megabyte of values is read within the memory bound.
    under = write('under.yaml', 'x: [' + '123456789,' * 99000 + '1]\n')
    code, _, err = attune('validate', under)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    check(code == 2 and "unknown key 'x'" in err, f'under: {code} {err.strip()!r}')
    check(peak_kib < 100 * 1024, f'under: peak RSS {peak_kib} KiB')
    print(f'  1 MB of values refused or read; peak RSS of children so far {peak_kib / 1024:.0f} MiB')


def test_invalid_utf8_in_a_failed_job_log():
    print('invalid UTF-8 in a failed job log')
    script = write('fail_xff.py', 'import sys\n'
                   'sys.stderr.buffer.write(b"Traceback (most recent call last):\\n'
                   'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB '
                   '\\xff\\xfe (GPU 0)\\n")\n'
                   'sys.exit(1)\n')
    tiny = open(os.path.join(ARGS.source, 'tests', 'fixtures', 'crash', 'minigpt-tiny.yaml')).read()
    recipe = write('xff-recipe.yaml', re.sub(r'^entry: .*$', f'entry: [/usr/bin/python3, {script}]',
                                             tiny, flags=re.M))
    wf = write('xff.yaml', f'''attune: 1
name: xff
stack: megatron
recipe: {recipe}
launcher: {{name: local, with: {{devices_per_node: 1, poll_interval_s: 0.2, grace_s: 2}}}}
agent: heuristic
seed: 7
budget: {{gpu_hours: 0.05, max_candidates: 2, job_time_limit_s: 60}}
steps:
  - {{id: baseline, uses: benchmark, with: {{repeats: 1}}}}
  - {{id: report, uses: report}}
''')
    campaign = os.path.join(SCRATCH, 'c-xff')
    code, out, err = attune('run', wf, '--dir', campaign)
    check(code == 0, f'xff: run exit {code} ({err.strip()})')
    finished = [e for e in events(campaign) if e['type'] == 'JobFinished']
    check(len(finished) >= 1, 'xff: no JobFinished stored')
    if finished:
        data = finished[0]['data']
        check(data.get('invalid_utf8_bytes') == 2, f'xff: bytes counted {data.get("invalid_utf8_bytes")}')
        check('\ufffd\ufffd' in data['failure']['evidence'], 'xff: U+FFFD in the evidence')
        check(data['failure']['kind'] == 'oom', 'xff: still classified as OOM')
    code, out, err = attune('verify', '--dir', campaign)
    check(code == 0, f'xff: verify exit {code}')
    code, out, err = attune('status', '--dir', campaign, '--json')
    check(code == 0 and json.loads(out)['state'] == 'finished', f'xff: status exit {code}')
    logs = glob.glob(os.path.join(campaign, 'jobs', '*-baseline-1', 'job.log'))
    check(len(logs) == 1, f'xff: one baseline job log, found {logs}')
    log = logs[0]
    for sub in ('parse', 'triage'):
        code, out, err = attune('log', sub, log, '--stack', 'megatron', '--json')
        check(code == 0, f'xff: log {sub} --json exit {code} ({err.strip()})')
        json.loads(out)


def crash_partway(name, workflow_text):
    path = write(name + '.yaml', workflow_text)
    campaign = os.path.join(SCRATCH, 'c-' + name)
    code, _, _ = attune('run', path, '--dir', campaign, env={'ATTUNE_CRASH_AT': 'job.submitted:8'})
    check(code != 0, f'{name}: the crash point did not stop the run')
    return path, campaign


def test_resume_with_an_edited_workflow_and_amend():
    print('resume with an edited workflow; amend')
    wf = base_workflow()
    path, campaign = crash_partway('edited', wf)
    lowered = write('edited-low.yaml', wf.replace('gpu_hours: 60', 'gpu_hours: 5'))
    code, out, err = attune('run', lowered, '--dir', campaign)
    check(code == 0, f'edited: resume exit {code}')
    check('budget.gpu_hours: recorded 60.0, the file 5.0' in out, f'edited: no difference said: {out[:400]!r}')
    check('the recorded values are used' in out, 'edited: does not say which wins')
    status = json.loads(attune('status', '--dir', campaign, '--json')[1])
    check(status['budget']['total_gpu_hours'] == 60, 'edited: the recorded budget was not used')

    path, campaign = crash_partway('amend', wf)
    bad = write('amend-bad.yaml', wf.replace('noise_band: 0.03', 'noise_band: 0.05'))
    code, out, err = attune('run', '--dir', campaign, '--amend-workflow', bad)
    check(code == 2 and 'measure.noise_band: recorded 0.03, the file 0.05' in err,
          f'amend: a noise-band change was not refused: {code} {err.strip()!r}')
    started = write('amend-started.yaml', wf.replace('with: {repeats: 3}}', 'with: {repeats: 2}}', 1))
    code, out, err = attune('run', '--dir', campaign, '--amend-workflow', started)
    check(code == 2 and "('baseline') has started" in err, f'amend: a started step changed: {err!r}')
    good = write('amend-good.yaml', wf.replace('gpu_hours: 60', 'gpu_hours: 80').replace(
        "if: \"leader != 'baseline'\", with: {repeats: 3}", 'if: "leader_changed", with: {repeats: 2}'))
    code, out, err = attune('run', '--dir', campaign, '--amend-workflow', good)
    check(code == 0 and 'workflow amended (3 changes)' in out, f'amend: {code} {err.strip()!r}')
    amended = [e for e in events(campaign) if e['type'] == 'WorkflowAmended']
    check(len(amended) == 1, 'amend: one WorkflowAmended event')
    if amended:
        d = amended[0]['data']
        check(d['previous_hash'] != d['workflow_hash'], 'amend: both hashes recorded')
    status = json.loads(attune('status', '--dir', campaign, '--json')[1])
    check(status['budget']['total_gpu_hours'] == 80, 'amend: the budget was not amended')
    code, out, err = attune('verify', '--dir', campaign)
    check(code == 0, 'amend: verify')
    code, out, err = attune('run', '--dir', campaign, '--amend-workflow', good)
    check(code == 0 and 'already finished' in out, f'amend: rerun {code} {out!r}')


def test_lock_files_deleted_under_a_live_run():
    print('lock files deleted under a live run')
    wf = base_workflow().replace('startup_s: 120', 'startup_s: 120')
    # A sim campaign is too quick; the local launcher with a sleeping job holds the directory.
    script = write('sleeper.py', 'import time\ntime.sleep(30)\n')
    tiny = open(os.path.join(ARGS.source, 'tests', 'fixtures', 'crash', 'minigpt-tiny.yaml')).read()
    recipe = write('sleep-recipe.yaml', re.sub(r'^entry: .*$', f'entry: [/usr/bin/python3, {script}]',
                                               tiny, flags=re.M))
    path = write('sleep.yaml', f'''attune: 1
stack: megatron
recipe: {recipe}
launcher: {{name: local, with: {{devices_per_node: 1, poll_interval_s: 0.2, grace_s: 1}}}}
agent: heuristic
budget: {{gpu_hours: 0.05, job_time_limit_s: 60}}
steps:
  - {{id: baseline, uses: benchmark, with: {{repeats: 1}}}}
''')
    campaign = os.path.join(SCRATCH, 'c-lock')
    first = subprocess.Popen([ARGS.attune, 'run', path, '--dir', campaign, '--on-stop', 'cancel'],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=SCRATCH)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not os.path.exists(os.path.join(campaign, 'jobs')):
        time.sleep(0.2)
    for name in ('LOCK', 'LOCK-attune'):
        try:
            os.unlink(os.path.join(campaign, 'log', name))
        except FileNotFoundError:
            pass
    code, out, err = attune('run', path, '--dir', campaign)
    check(code == 4, f'lock: second run exit {code}')
    check(f'in use by attune pid {first.pid}' in err, f'lock: holder not named: {err.strip()!r}')
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=60)
    code, out, err = attune('verify', '--dir', campaign)
    check(code == 0, f'lock: verify after the refused second writer: {err.strip()!r}')


def test_an_exception_in_a_plugin_pauses_the_campaign():
    print('an exception thrown by a plugin')
    wf = base_workflow().replace('agent: heuristic', 'agent: throwing-propose')
    path = write('throwing.yaml', wf)
    campaign = os.path.join(SCRATCH, 'c-throw')
    plugins = os.path.join(ARGS.test_plugins, 'throwingpropose')
    env = {'ATTUNE_TEST_AGENT_THROWS': '1'}
    code, out, err = attune('run', path, '--dir', campaign, '--plugin-path', plugins, env=env)
    check(code == 1, f'throw: exit {code} (not an abort)')
    check("stopped on an unexpected error: boom from the throwing-propose test agent" in err,
          f'throw: said {err.strip()!r}')
    check('campaign is paused' in err, 'throw: says the campaign is paused')
    types = [e['type'] for e in events(campaign)]
    check(types[-1] == 'CampaignPaused', f'throw: last event {types[-1]}')
    code, out, err = attune('run', '--dir', campaign, '--plugin-path', plugins)
    check(code == 0 and 'campaign finished' in out, f'throw: resume after the fix: {code} {err!r}')


def test_a_baseline_that_cannot_run_is_said_plainly_and_not_retried():
    print('a deterministic baseline failure')
    script = write('fail_cfg.py', 'import sys\n'
                   'sys.stderr.write("Traceback (most recent call last):\\n'
                   'AssertionError: world size (8) is not divisible by total_model_size (128)\\n")\n'
                   'sys.exit(1)\n')
    tiny = open(os.path.join(ARGS.source, 'tests', 'fixtures', 'crash', 'minigpt-tiny.yaml')).read()
    recipe = write('cfg-recipe.yaml', re.sub(r'^entry: .*$', f'entry: [/usr/bin/python3, {script}]',
                                             tiny, flags=re.M))
    wf = write('cfg.yaml', f'''attune: 1
stack: megatron
recipe: {recipe}
launcher: {{name: local, with: {{devices_per_node: 1, poll_interval_s: 0.2, grace_s: 2}}}}
agent: heuristic
budget: {{gpu_hours: 0.05, job_time_limit_s: 60}}
steps:
  - {{id: baseline, uses: benchmark, with: {{repeats: 3}}}}
  - {{id: tune, uses: tune}}
  - {{id: report, uses: report}}
''')
    campaign = os.path.join(SCRATCH, 'c-cfg')
    code, out, err = attune('run', wf, '--dir', campaign)
    check(code == 0, f'cfg: run exit {code} {err}')
    requested = [e for e in events(campaign) if e['type'] == 'JobRequested']
    check(len(requested) == 1, f'cfg: {len(requested)} baseline runs for a config error, expected 1')
    code, out, err = attune('status', '--dir', campaign)
    check('the baseline was never measured' in out and 'config_error' in out and
          'not divisible by total_model_size' in out, f'cfg: status said {out!r}')
    report = open(os.path.join(campaign, 'REPORT.md')).read()
    check('**The baseline was never measured**' in report, 'cfg: REPORT.md does not say so')
    check('ship the baseline' not in report and '## Shipped recipe' not in report,
          'cfg: REPORT.md still recommends shipping')
    check('not divisible by total_model_size (128)' in report, 'cfg: REPORT.md lacks the evidence')


def test_a_recipe_that_cannot_run_on_the_cluster_is_refused_before_anything_runs():
    print('a recipe whose parallel sizes do not divide the world size')
    src = os.path.join(ARGS.source, 'workflows', 'examples', 'recipes', 'llama3-8b-a100x8.yaml')
    text = open(src).read().replace('--pipeline-model-parallel-size, "1"',
                                    '--pipeline-model-parallel-size, "16"')
    check('"16"' in text, 'pp16: the recipe was not edited')
    recipe = write('pp16-recipe.yaml', text)
    wf = write('pp16.yaml', re.sub(r'^recipe: .*$', 'recipe: ' + recipe, base_workflow(), flags=re.M))
    campaign = os.path.join(SCRATCH, 'c-pp16')
    # `validate` finds it too, naming the recipe and the topology it read.
    code, out, err = attune('validate', wf)
    check(code == 2 and 'pp16-recipe.yaml' in err and
          "world size 16 (the recipe's topology: 2 node(s) x 8 GPUs)" in err, f'pp16 validate: {code} {err!r}')
    code, out, err = attune('run', wf, '--dir', campaign)
    check(code == 2, f'pp16: exit {code}')
    check('cannot run as it is on this launcher' in err and
          'is not divisible by TP*PP*CP = 2*16*1 = 32' in err and
          'Nothing was run or spent' in err, f'pp16: said {err.strip()!r}')
    code, out, err = attune('status', '--dir', campaign)
    check(code != 0 and 'holds no events' in err, f'pp16: something was recorded: {out!r} {err!r}')


def test_unreadable_directory_says_permission_denied():
    print('unreadable campaign directory')
    if os.geteuid() != 0 or not shutil.which('setpriv'):
        print('  skipped: needs root and setpriv to act as another user')
        return
    os.chmod(SCRATCH, 0o755)
    wf = write('perm.yaml', base_workflow())
    campaign = os.path.join(SCRATCH, 'c-perm')
    code, _, err = attune('run', wf, '--dir', campaign)
    check(code == 0, f'perm: setup run {code} {err}')
    os.chmod(campaign, 0o700)
    as_nobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ARGS.attune]
    for command in (['verify', '--dir', campaign], ['status', '--dir', campaign]):
        p = subprocess.run(as_nobody + command, capture_output=True, text=True, cwd='/')
        check(p.returncode == 1 and 'permission denied: cannot read ' + campaign in p.stderr,
              f'perm: {command[0]} said {p.returncode} {p.stderr.strip()!r}')


def main():
    global ARGS, SCRATCH
    parser = argparse.ArgumentParser()
    parser.add_argument('--attune', required=True)
    parser.add_argument('--source', required=True)
    parser.add_argument('--test-plugins', required=True)
    ARGS = parser.parse_args()
    ARGS.attune = os.path.abspath(ARGS.attune)
    SCRATCH = tempfile.mkdtemp(prefix='attune-badinput-')
    try:
        for name, fn in sorted(globals().items()):
            if name.startswith('test_') and callable(fn):
                fn()
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
    if FAILURES:
        print(f'{len(FAILURES)} failure(s)')
        return 1
    print('all bad-input checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
