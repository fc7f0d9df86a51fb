#!/usr/bin/python3
"""How exactly `attune recipe import` reads launch scripts people have: each script runs once
under bash with recording launchers (the reference: the argv bash itself gives the launcher) and
is imported once; the import is exact when the recipe's rendered launch has the same training
script, the same flags with the same values, and the same topology flags.

    import_check.py --attune BUILD/bin/attune --stack megatron [--cwd REPO] SCRIPT... [--json OUT]
    import_check.py --attune BUILD/bin/attune --stack automodel --configs CONFIG.yaml...

Scripts get positional arguments /arg1 ... /arg9 (many examples take paths). The reference runs
in a bubblewrap sandbox too (read-only root, private /tmp, no network), with its own recorder,
so third-party scripts never touch this machine. Third-party scripts stay out of the repository:
point this tool at a checkout.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

RECORDER = r'''#!/bin/bash
out="$REFERENCE_DIR/$(date +%s%N)-$$"
mkdir -p "$out"
printf '%s\0' "${0##*/}" "$@" > "$out/argv"
# srun/mpirun run the shell they are given on each task (`srun … bash -c 'python …'`): so does the
# reference, as task 0.
case "${0##*/}" in
  srun|mpirun)
    for ((i = 1; i < $#; i++)); do
      case "${!i##*/}" in
        bash|sh) j=$((i + 1)); k=$((i + 2))
          [[ "${!j}" =~ ^-[a-zA-Z]*c[a-zA-Z]*$ ]] && SLURM_PROCID=0 SLURM_NODEID=0 SLURM_LOCALID=0 exec bash -c "${!k}"
          break ;;
      esac
    done ;;
esac
exit 0
'''
RECORDED = ['torchrun', 'python', 'python3', 'ray', 'uv', 'srun', 'mpirun', 'deepspeed',
            'accelerate', 'automodel', 'nvidia-smi', 'pip', 'pip3', 'sleep', 'wandb', 'scontrol']
POSITIONAL = [f'/arg{i}' for i in range(1, 10)]
EXTRA_ENV = {}  # --env NAME=VALUE, for the reference and the import alike


def is_launch(argv):
    name = argv[0]
    if name in ('torchrun', 'srun', 'mpirun', 'deepspeed', 'automodel'):
        return True
    if name == 'ray':
        return argv[1:3] == ['job', 'submit']
    if name.startswith('python'):
        return len(argv) > 1 and argv[1] != '-c' and argv[1:3] != ['-m', 'pip']
    if name == 'uv':
        return len(argv) > 1 and argv[1] == 'run'
    return False


def reference(script, scratch, cwd):
    bindir = os.path.join(scratch, 'refbin')
    if not os.path.isdir(bindir):
        os.makedirs(bindir)
        stub = os.path.join(scratch, 'recorder')
        with open(stub, 'w') as f:
            f.write(RECORDER)
        os.chmod(stub, 0o755)
        for name in RECORDED:
            os.symlink(stub, os.path.join(bindir, name))
    rec = tempfile.mkdtemp(dir=scratch, prefix='rec-')
    here = os.path.dirname(os.path.abspath(script))
    cmd = ['bwrap', '--die-with-parent', '--unshare-all', '--ro-bind', '/', '/', '--dev', '/dev',
           '--proc', '/proc', '--tmpfs', '/tmp', '--bind', scratch, scratch, '--ro-bind', here, here,
           '--ro-bind', cwd, cwd, '--chdir', cwd, 'bash', os.path.abspath(script), *POSITIONAL]
    env = {'PATH': bindir + ':/usr/bin:/bin', 'HOME': scratch, 'LANG': 'C.UTF-8', 'REFERENCE_DIR': rec}
    env.update(EXTRA_ENV)
    try:
        subprocess.run(cmd, env=env, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None
    calls = []
    for name in sorted(os.listdir(rec)):
        data = open(os.path.join(rec, name, 'argv'), 'rb').read().decode(errors='replace')
        calls.append(data.split('\0')[:-1])
    shutil.rmtree(rec, ignore_errors=True)
    launches = [c for c in calls if c and is_launch(c)]
    return launches[-1] if launches else None


def split_launch(argv):
    """(training script, {flag: values}) of a launch argv; flags after the script, last wins."""
    at = next((i for i, w in enumerate(argv) if w.endswith('.py')), None)
    if at is None:
        return None, {}
    words = []
    for w in argv[at + 1:]:  # --flag=value is --flag value to argparse (and in a recipe)
        if w.startswith('--') and '=' in w:
            words += w.split('=', 1)
        else:
            words.append(w)
    argv, at = [argv[at]] + words, 0
    flags, i = {}, at + 1
    while i < len(argv):
        if argv[i].startswith('--'):
            j = i + 1
            while j < len(argv) and not argv[j].startswith('--'):
                j += 1
            flags[argv[i]] = argv[i + 1:j]
            i = j
        else:
            flags.setdefault('(positional)', []).append(argv[i])
            i += 1
    return os.path.basename(argv[at]), flags


def imported(attune, script, stack, scratch, cwd):
    recipe = os.path.join(scratch, 'recipe.yaml')
    args = [attune, 'recipe', 'import', script, '--stack', stack, '-o', recipe]
    for a in POSITIONAL:
        args += ['--arg', a]
    for k, v in EXTRA_ENV.items():
        args += ['--env', f'{k}={v}']
    p = subprocess.run(args, capture_output=True, text=True, cwd=cwd, errors='replace', timeout=120)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or ['(no message)']
    p2 = subprocess.run([attune, 'recipe', 'launch', recipe, '--json'], capture_output=True, text=True)
    if p2.returncode != 0:
        return None, ['recipe launch: ' + p2.stderr.strip()]
    return json.loads(p2.stdout)['argv'], p.stderr.strip().splitlines()


def check_scripts(a, scratch):
    rows = []
    for script in a.scripts:
        cwd = os.path.abspath(a.cwd or os.path.dirname(os.path.abspath(script)))
        ref = reference(script, scratch, cwd)
        if ref is None:
            rows.append({'script': script, 'result': 'no_launch'})
            continue
        argv, notes = imported(a.attune, os.path.abspath(script), a.stack, scratch, cwd)
        if argv is None:
            rows.append({'script': script, 'result': 'import_failed', 'why': notes[-1]})
            continue
        ref_script, want = split_launch(ref)
        got_script, got = split_launch(argv)
        # Values that change from one bash run to the next (dates, $RANDOM) are not compared.
        again = reference(script, scratch, cwd)
        volatile = {k for k, v in split_launch(again)[1].items() if want.get(k) != v} if again else set()
        diffs = [f'{k}: bash {want.get(k)} import {got.get(k)}' for k in sorted(set(want) | set(got))
                 if want.get(k) != got.get(k) and k not in volatile]
        if ref_script != got_script:
            diffs.insert(0, f'script: bash {ref_script} import {got_script}')
        rows.append({'script': script, 'result': 'exact' if not diffs else 'differs', 'diffs': diffs[:5],
                     'flags': len(want), 'volatile': sorted(volatile)})
    return rows


def compare_config(want, got, path, diffs):
    """Differences between the config as PyYAML reads it and the imported one (read back with
    PyYAML from the recipe attune wrote). PyYAML (YAML 1.1) reads `5e-5` as a string, which
    AutoModel's config loader turns into the number; a number and its string are equal here."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got), key=str):
            compare_config(want.get(k), got.get(k), f'{path}.{k}', diffs)
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (w, g) in enumerate(zip(want, got)):
            compare_config(w, g, f'{path}[{i}]', diffs)
    elif want != got:
        # PyYAML reads an exponent without a dot (5e-5, and attune's 1e-08) as a string.
        if not isinstance(want, bool) and not isinstance(got, bool):
            try:
                if float(want) == float(got):
                    return
            except (TypeError, ValueError):
                pass
        diffs.append(f'{path}: yaml {want!r} import {got!r}'[:200])


def check_configs(a, scratch):
    import yaml
    rows = []
    for config in a.configs:
        try:
            want = yaml.safe_load(open(config))
        except Exception as e:  # not a YAML we can read either
            rows.append({'script': config, 'result': 'no_launch', 'why': str(e)[:100]})
            continue
        if not isinstance(want, dict):
            rows.append({'script': config, 'result': 'no_launch'})
            continue
        p = subprocess.run([a.attune, 'recipe', 'import', config, '--stack', 'automodel'],
                           capture_output=True, text=True, errors='replace')
        if p.returncode != 0:
            rows.append({'script': config, 'result': 'import_failed', 'why': p.stderr.strip()[-200:]})
            continue
        got = yaml.safe_load(p.stdout).get('config')
        diffs = []
        compare_config(want, got, '', diffs)
        rows.append({'script': config, 'result': 'exact' if not diffs else 'differs', 'diffs': diffs[:5]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--attune', required=True)
    ap.add_argument('--stack', default='megatron')
    ap.add_argument('--json')
    ap.add_argument('--cwd', help='run every script from here (e.g. the repository root); '
                                  'default: the script\'s folder')
    ap.add_argument('--configs', nargs='*', default=[])
    ap.add_argument('--env', action='append', default=[], help='NAME=VALUE for every script')
    ap.add_argument('scripts', nargs='*')
    a = ap.parse_args()
    a.attune = os.path.abspath(a.attune)
    EXTRA_ENV.update(item.split('=', 1) for item in a.env)
    scratch = tempfile.mkdtemp(prefix='attune-import-check-')
    try:
        rows = check_scripts(a, scratch) + check_configs(a, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    counts = {}
    for r in rows:
        counts[r['result']] = counts.get(r['result'], 0) + 1
    launches = len(rows) - counts.get('no_launch', 0)
    for r in rows:
        if r['result'] in ('differs', 'import_failed'):
            print(f"{r['result']}: {r['script']}: {'; '.join(r.get('diffs') or [r.get('why', '')])}")
    print(f"{launches} with a launch: {counts.get('exact', 0)} exact, {counts.get('differs', 0)} differ, "
          f"{counts.get('import_failed', 0)} failed to import; {counts.get('no_launch', 0)} made no launch")
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
