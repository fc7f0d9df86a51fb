#!/usr/bin/python3
"""The conformance suites (`attune stack check`, `attune launcher check`, `attune agent check`), on the in-tree plugins
and on themselves.

1. Every in-tree stack keeps the contract on the shipped example recipes (and an AutoModel recipe
   imported from the test fixtures).
2. The suite can fail: a test stack plugin with one defect at a time (ATTUNE_TESTSTACK_DEFECT,
   tests/plugins/defective_stack_plugin.cc) must be refused, naming the broken clause; with no
   defect it passes.
3. The local and sim launchers keep the launcher contract (Slurm and KubeRay are checked by their
   own tests, which start the cluster or the API server double), and a test launcher with one
   defect at a time (ATTUNE_TESTLAUNCHER_DEFECT, tests/plugins/defective_launcher_plugin.cc, the
   real local launcher behind the defect) is refused by clause.
4. The heuristic, random and grid agents keep the agent contract (`attune agent check`), and a test
   agent with one defect at a time (ATTUNE_TESTAGENT_DEFECT, tests/plugins/defective_agent_plugin.cc)
   is refused by clause.

    conformance_test.py --attune BUILD/bin/attune --test-plugins BUILD/test-plugins --source SRC
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILURES = []

# defect -> (the clauses that must fail, words their message must hold). A stack with no levers
# has no moves either; a gate that refuses the recipe itself refuses its moves and form too.
DEFECTS = {
    'describe': (['describe'], 'not a JSON object'),
    'no_levers': (['levers', 'moves'], 'no levers'),
    'validate_moved': (['moves'], 'Validate refuses the result'),
    'foreign_lever': (['moves'], 'not a lever of Levers()'),
    'objective_move': (['moves'], "the stack's own gate refuses it"),
    'stray_move': (['moves'], "changes none of lever b's keys"),
    'gate_self': (['gate.self', 'moves', 'benchmark_form'], 'against itself is refused'),
    'render_empty': (['render'], 'empty argv'),
    'form_topology': (['benchmark_form'], 'topology'),
    'form_objective': (['benchmark_form'], 'changes the objective'),
    'parse_throws': (['logs.hostile'], 'the plugin threw: NUL byte'),
    'parse_random': (['logs.hostile'], 'parsed differently twice'),
    'killed_is_fine': (['logs.hostile'], 'exit code 137 is no failure'),
    'clean_is_failure': (['triage.clean'], 'exited 0 is'),
}

TEST_RECIPE = '''stack: teststack
entry: [train.py]
args:
  - [--a, "1"]
  - [--b, "1"]
  - [--lr, "0.1"]
topology:
  nodes: 1
  gpus_per_node: 8
'''


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print('  FAIL: ' + what, flush=True)


def stack_check(args, name, recipe, env=None, plugin_path=None, cwd=None):
    cmd = [args.attune]
    if plugin_path:
        cmd += ['--plugin-path', plugin_path]
    cmd += ['stack', 'check', name, recipe, '--json']
    full_env = dict(os.environ)
    full_env.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=cwd, timeout=300)
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        out = None
    return p.returncode, out, p.stderr


def in_tree(args, scratch):
    recipes = [('megatron', os.path.join(args.source, 'workflows/recipes/minigpt.yaml'))]
    examples = os.path.join(args.source, 'workflows/examples/recipes')
    for name in sorted(os.listdir(examples)):
        if not name.endswith('.yaml'):
            continue  # a launch script beside its recipe (slime-*.sh)
        path = os.path.join(examples, name)
        stack = next(l.split(':', 1)[1].strip() for l in open(path) if l.startswith('stack:'))
        recipes.append((stack, path))
    am = os.path.join(scratch, 'automodel')
    os.makedirs(am)
    for f in ('launch_automodel.sh', 'llama_sft.yaml'):
        shutil.copy(os.path.join(args.source, 'tests/fixtures/automodel', f), am)
    p = subprocess.run([args.attune, 'recipe', 'import', 'launch_automodel.sh', '--stack', 'automodel',
                        '-o', 'recipe.yaml'], capture_output=True, text=True, cwd=am)
    check(p.returncode == 0, f'automodel fixture imports: {p.stderr[-300:]}')
    recipes.append(('automodel', os.path.join(am, 'recipe.yaml')))
    for stack, path in recipes:
        code, out, err = stack_check(args, stack, path, cwd=am)
        failed = [c for c in (out or {}).get('clauses', []) if not c['pass']]
        check(code == 0 and out and out['pass'] and len(out['clauses']) == 9,
              f'{stack} on {os.path.basename(path)}: exit {code}, failing {failed} {err[-300:]}')
        print(f'  {stack:9} {os.path.basename(path)}: exit {code}', flush=True)


def cluster_option(args, scratch):
    """--cluster: a user's cluster as JSON; a malformed file is refused with exit 2."""
    recipe = os.path.join(args.source, 'workflows/recipes/minigpt.yaml')
    cpu = os.path.join(scratch, 'cpu.json')
    with open(cpu, 'w') as f:
        json.dump({'device_type': 'cpu', 'devices_per_node': 1, 'max_nodes': 1}, f)
    p = subprocess.run([args.attune, 'stack', 'check', 'megatron', recipe, '--cluster', cpu],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0 and 'Validate accepts it on cpu x1' in p.stdout,
          f'--cluster cpu.json: exit {p.returncode} {p.stdout[-300:]} {p.stderr[-300:]}')
    bad = os.path.join(scratch, 'bad.json')
    with open(bad, 'w') as f:
        f.write('[1, 2')
    p = subprocess.run([args.attune, 'stack', 'check', 'megatron', recipe, '--cluster', bad],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and 'expected a JSON object' in p.stderr,
          f'--cluster with malformed JSON: exit {p.returncode} {p.stderr[-300:]}')
    print(f'  --cluster: a CPU cluster validates, malformed JSON exits {p.returncode}', flush=True)


def defects(args, scratch):
    recipe = os.path.join(scratch, 'teststack.yaml')
    with open(recipe, 'w') as f:
        f.write(TEST_RECIPE)
    plugins = os.path.join(args.test_plugins, 'defectivestack')
    code, out, err = stack_check(args, 'teststack', recipe, {'ATTUNE_TESTSTACK_DEFECT': ''}, plugins)
    check(code == 0 and out and out['pass'], f'teststack without a defect passes: exit {code} {out} {err[-300:]}')
    print(f'  no defect: exit {code}', flush=True)
    for defect, (clauses, words) in DEFECTS.items():
        code, out, err = stack_check(args, 'teststack', recipe, {'ATTUNE_TESTSTACK_DEFECT': defect}, plugins)
        failed = [c['clause'] for c in (out or {}).get('clauses', []) if not c['pass']]
        detail = next((c['detail'] for c in (out or {}).get('clauses', []) if c['clause'] == clauses[0]), '')
        check(code == 1 and failed == clauses and words in detail,
              f'defect {defect}: exit {code}, failing {failed} ({detail!r}), expected {clauses} saying {words!r} {err[-200:]}')
        print(f'  defect {defect:16} -> {failed}: {detail[:110]}', flush=True)


LAUNCHER_CLAUSES = ['cluster', 'poll.unknown', 'run.success', 'submit.idempotent', 'restart',
                    'cancel.finished', 'run.failure', 'log.running', 'cancel.running', 'time_limit']
LOCAL_WITH = json.dumps({'devices_per_node': 1, 'poll_interval_s': 0.2, 'grace_s': 1})

# defect -> (the clauses that must fail, words the first one's message must hold).
LAUNCHER_DEFECTS = {
    'no_devices': (['cluster'], '0 devices per node'),
    'unknown_is_pending': (['poll.unknown'], 'it must be unknown'),
    'failure_is_success': (['run.failure'], 'not failed'),
    'no_times': (['run.success', 'cancel.running'], 'no start and end time'),
    'submit_twice': (['submit.idempotent', 'restart'], 'started 2 times'),
    'forgets': (['restart'], 'a fresh launcher (a restarted engine) sees the job as unknown'),
    'cancel_finished_fails': (['cancel.finished', 'cancel.running'], 'must be a no-op'),
    'log_only_at_end': (['log.running'], 'ReadLog does not show what it printed'),
    'cancel_ignored': (['cancel.running'], 'still running'),
    'timeout_is_failure': (['time_limit'], 'not timed_out'),
    'ignores_limit': (['time_limit'], 'still runs'),
}


def run_check(args, kind, name, options, env=None, plugin_path=None):
    """`attune [--plugin-path P] KIND check NAME --json OPTIONS...` -> (exit code, JSON or None, output)."""
    cmd = [args.attune]
    if plugin_path:
        cmd += ['--plugin-path', plugin_path]
    cmd += [kind, 'check', name, '--json'] + options
    full_env = dict(os.environ)
    full_env.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=600)
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        out = None
    return p.returncode, out, p.stdout + p.stderr  # with --json an error is JSON on stdout


def launcher_check(args, name, extra, env=None, plugin_path=None, job_timeout=30):
    return run_check(args, 'launcher', name, ['--job-timeout', str(job_timeout), '--time-limit', '2'] + extra,
                     env, plugin_path)


def launchers(args):
    code, out, err = launcher_check(args, 'local', ['--with', LOCAL_WITH])
    clauses = [c['clause'] for c in (out or {}).get('clauses', [])]
    failed = [c for c in (out or {}).get('clauses', []) if not c['pass'] or c['skipped']]
    check(code == 0 and out and out['pass'] and clauses == LAUNCHER_CLAUSES and not failed,
          f'local launcher: exit {code}, clauses {clauses}, failing or skipped {failed} {err[-300:]}')
    print(f'  local: exit {code}, {len(clauses)} clauses', flush=True)
    recipe = os.path.join(args.source, 'workflows/examples/recipes/llama3-8b-a100x8.yaml')
    code, out, err = launcher_check(args, 'sim', ['--with', json.dumps({'gpu': 'A100', 'nodes': 2}),
                                                  '--stack', 'megatron', '--recipe', recipe])
    skipped = [c['clause'] for c in (out or {}).get('clauses', []) if c['skipped']]
    check(code == 0 and out and out['pass'] and skipped == ['run.failure', 'log.running', 'cancel.running', 'time_limit'],
          f'sim launcher: exit {code}, skipped {skipped}, {out} {err[-300:]}')
    print(f'  sim: exit {code}, skipped (virtual time) {skipped}', flush=True)
    code, out, err = launcher_check(args, 'sim', [])
    check(code == 2 and '--stack NAME --recipe FILE' in err, f'sim without a recipe: exit {code} {err[-300:]}')
    code, out, err = launcher_check(args, 'local', ['--with', '{"devices_per_node": '])
    check(code == 2 and 'expected a JSON object' in err, f'malformed --with: exit {code} {err[-300:]}')
    code, out, err = launcher_check(args, 'local', ['--with', '{"devices_per_nod": 1}'])
    check(code == 2 and 'devices_per_node' in err, f'misspelt option: exit {code} {err[-300:]}')


def launcher_defects(args):
    plugins = os.path.join(args.test_plugins, 'defectivelauncher')
    code, out, err = launcher_check(args, 'testlauncher', ['--with', LOCAL_WITH], {'ATTUNE_TESTLAUNCHER_DEFECT': ''}, plugins)
    check(code == 0 and out and out['pass'], f'testlauncher without a defect passes: exit {code} {out} {err[-300:]}')
    print(f'  no defect: exit {code}', flush=True)
    # The probes mostly sleep: the defects run side by side.
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        runs = {d: pool.submit(launcher_check, args, 'testlauncher', ['--with', LOCAL_WITH],
                               {'ATTUNE_TESTLAUNCHER_DEFECT': d}, plugins, 15) for d in LAUNCHER_DEFECTS}
    for defect, (clauses, words) in LAUNCHER_DEFECTS.items():
        code, out, err = runs[defect].result()
        failed = [c['clause'] for c in (out or {}).get('clauses', []) if not c['pass']]
        detail = next((c['detail'] for c in (out or {}).get('clauses', []) if c['clause'] == clauses[0]), '')
        check(code == 1 and failed == clauses and words in detail,
              f'launcher defect {defect}: exit {code}, failing {failed} ({detail!r}), expected {clauses} saying {words!r} {err[-200:]}')
        print(f'  defect {defect:22} -> {failed}: {detail[:100]}', flush=True)


AGENT_CLAUSES = ['create', 'propose.first', 'proposal.record', 'propose.after-refusal', 'propose.after-failure',
                 'propose.new-leader', 'propose.restart', 'propose.no-moves', 'answers.time']

# defect -> (the clauses that must fail, words the first one's message must hold).
AGENT_DEFECTS = {
    'throws': (['propose.first', 'propose.after-refusal', 'propose.after-failure', 'propose.new-leader',
                'propose.restart', 'propose.no-moves'], 'Propose threw: testagent: thrown on purpose'),
    'hangs': (['propose.first', 'answers.time'], 'did not return within 2 s'),
    'meta_array': (['proposal.record'], 'meta is not a JSON object'),
    # From the new leader the first legal move is another one: only the other three repeat it.
    'repeats': (['propose.after-refusal', 'propose.after-failure', 'propose.restart'],
                'again although the gate refused it'),
    'no_moves_stale': (['propose.no-moves'], 'says it is 7'),
    'done_with_changes': (['propose.first', 'propose.after-refusal', 'propose.after-failure', 'propose.new-leader',
                           'propose.restart'], 'answered done but also carries changes'),
    'stale_from': (['propose.first', 'propose.after-refusal', 'propose.after-failure', 'propose.new-leader',
                    'propose.restart'], 'says it is stale-value'),
    'wrong_value': (['propose.first', 'propose.after-refusal', 'propose.after-failure', 'propose.new-leader',
                     'propose.restart'], 'are not one legal move of the view'),
    # A move the view lists as legal only after another (Move::unlocks): also shows the views carry unlocks.
    'unlocked': (['propose.first', 'propose.after-refusal', 'propose.after-failure', 'propose.new-leader',
                  'propose.restart'], 'which the view lists as legal only after'),
    'two_levers': (['propose.first', 'propose.after-refusal', 'propose.after-failure', 'propose.new-leader',
                    'propose.restart'], 'one lever per candidate'),
    'no_restart': (['propose.restart'], 'a second object was not created'),
}


def agent_check(args, name, extra=None, env=None, plugin_path=None, timeout=60):
    return run_check(args, 'agent', name, ['--timeout', str(timeout)] + (extra or []), env, plugin_path)


def agents(args):
    recipe = os.path.join(args.source, 'workflows/examples/recipes/llama3-8b-a100x8.yaml')
    # Grid search proposes the points of the user's space, several keys at once when the space has
    # several axes (a baseline, not a one-lever tuner); a one-axis space of legal values keeps
    # every clause (with no legal moves it still proposes its points, which must apply).
    grid_space = json.dumps({'space': {'--attention-backend': ['flash', 'fused']}})
    for name, extra in [('heuristic', []), ('random', []), ('grid', ['--with', grid_space])]:
        code, out, err = agent_check(args, name, ['--recipe', recipe] + extra)
        clauses = [c['clause'] for c in (out or {}).get('clauses', [])]
        bad = [(c['clause'], c['detail']) for c in (out or {}).get('clauses', []) if not c['pass'] or c['skipped']]
        check(code == 0 and out and out['pass'] and clauses == AGENT_CLAUSES and not bad,
              f'{name} agent: exit {code}, clauses {clauses}, failing or skipped {bad} {err[-300:]}')
        first = next((c['detail'] for c in (out or {}).get('clauses', []) if c['clause'] == 'propose.first'), '')
        print(f'  {name}: exit {code}; first: {first[:90]}', flush=True)
    code, out, err = agent_check(args, 'heuristic', ['--with', '{"max_pairs": '])
    check(code == 2 and 'expected a JSON object' in err, f'malformed --with: exit {code} {err[-300:]}')
    code, out, err = agent_check(args, 'heuristc')
    check(code == 2 and "did you mean 'heuristic'" in err, f'misspelt agent: exit {code} {err[-300:]}')
    code, out, err = agent_check(args, 'heuristic', ['--recipe', '/no/such/recipe.yaml'])
    check(code == 2 and '/no/such/recipe.yaml' in err, f'missing recipe: exit {code} {err[-300:]}')


def agent_defects(args):
    plugins = os.path.join(args.test_plugins, 'defectiveagent')
    recipe = os.path.join(args.source, 'workflows/examples/recipes/llama3-8b-a100x8.yaml')
    code, out, err = agent_check(args, 'testagent', ['--recipe', recipe], {'ATTUNE_TESTAGENT_DEFECT': ''}, plugins)
    check(code == 0 and out and out['pass'], f'testagent without a defect passes: exit {code} {out} {err[-300:]}')
    print(f'  no defect: exit {code}', flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        runs = {d: pool.submit(agent_check, args, 'testagent', ['--recipe', recipe],
                               {'ATTUNE_TESTAGENT_DEFECT': d}, plugins, 2) for d in AGENT_DEFECTS}
    for defect, (clauses, words) in AGENT_DEFECTS.items():
        code, out, err = runs[defect].result()
        failed = [c['clause'] for c in (out or {}).get('clauses', []) if not c['pass']]
        detail = next((c['detail'] for c in (out or {}).get('clauses', []) if c['clause'] == clauses[0]), '')
        check(code == 1 and failed == clauses and words in detail,
              f'agent defect {defect}: exit {code}, failing {failed} ({detail!r}), expected {clauses} saying {words!r} {err[-200:]}')
        print(f'  defect {defect:18} -> {failed}: {detail[:100]}', flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--attune', required=True)
    ap.add_argument('--test-plugins', required=True)
    ap.add_argument('--source', required=True)
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix='attune-conformance-')
    try:
        print('in-tree stacks on the example recipes', flush=True)
        in_tree(args, scratch)
        cluster_option(args, scratch)
        print('the suite refuses each defect of the test stack', flush=True)
        defects(args, scratch)
        print('in-tree launchers (local, sim)', flush=True)
        launchers(args)
        print('the suite refuses each defect of the test launcher', flush=True)
        launcher_defects(args)
        print('in-tree agents (heuristic, random, grid)', flush=True)
        agents(args)
        print('the suite refuses each defect of the test agent', flush=True)
        agent_defects(args)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if FAILURES:
        print(f'{len(FAILURES)} conformance check(s) failed')
        return 1
    print('all conformance checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
