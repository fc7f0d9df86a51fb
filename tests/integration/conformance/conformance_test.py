#!/usr/bin/python3
"""The stack conformance suite (`attune stack check`), on the in-tree stacks and on itself.

1. Every in-tree stack keeps the contract on the shipped example recipes (and an AutoModel recipe
   imported from the test fixtures).
2. The suite can fail: a test stack plugin with one defect at a time (ATTUNE_TESTSTACK_DEFECT,
   tests/plugins/defective_stack_plugin.cc) must be refused, naming the broken clause; with no
   defect it passes.

    conformance_test.py --attune BUILD/bin/attune --test-plugins BUILD/test-plugins --source SRC
"""
import argparse
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
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if FAILURES:
        print(f'{len(FAILURES)} conformance check(s) failed')
        return 1
    print('all conformance checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
