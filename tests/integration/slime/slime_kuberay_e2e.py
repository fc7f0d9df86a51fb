#!/usr/bin/env python3
"""A slime campaign end to end on the KubeRay launcher against the API server test double.

Starts tests/k8s_double (as crash_kuberay.py does), runs `attune run` on
tests/fixtures/slime/kuberay-slime.yaml (stack slime, the stand-in tools/slime/slime_standin.py
as train.py), and checks that the baseline was measured from slime's perf lines, that at least
one candidate ran, and that the report names a result. Exit 77 (skipped) without kubectl or the
double's Python packages.

  slime_kuberay_e2e.py --attune build/bin/attune [--workdir DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration", "kuberay"))
import crash_kuberay  # noqa: E402  (start_double, the double's controls)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--attune", required=True)
    p.add_argument("--workdir")
    p.add_argument("--kubectl", default=os.environ.get("ATTUNE_KUBECTL", "kubectl"))
    p.add_argument("--shared", default=os.environ.get("ATTUNE_SHARED_DIR", os.path.join(ROOT, "..", "shared")))
    args = p.parse_args()
    args.attune = os.path.abspath(args.attune)
    workdir = args.workdir or tempfile.mkdtemp(prefix="attune-slime-e2e-")
    shutil.rmtree(workdir, ignore_errors=True)
    state = os.path.join(workdir, "double")
    os.makedirs(state)
    proc, kubeconfig = crash_kuberay.start_double(args, state)
    campaign = os.path.join(workdir, "campaign")
    try:
        env = dict(os.environ, KUBECONFIG=kubeconfig)
        kubectl_dir = os.path.dirname(os.path.abspath(shutil.which(args.kubectl) or args.kubectl))
        env["PATH"] = kubectl_dir + os.pathsep + env.get("PATH", "")
        workflow = os.path.join(ROOT, "tests", "fixtures", "slime", "kuberay-slime.yaml")
        run = subprocess.run([args.attune, "run", workflow, "--dir", campaign], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=240)
        print(run.stdout[-4000:])
        print(run.stderr[-4000:], file=sys.stderr)
        status = subprocess.run([args.attune, "status", campaign, "--json"], cwd=ROOT, env=env,
                                capture_output=True, text=True)
    finally:
        subprocess.run([crash_kuberay.PYTHON, os.path.join(crash_kuberay.DOUBLE, "double_ctl.py"), state, "stop"])
        proc.wait(timeout=30)
    failures = []
    if run.returncode != 0:
        failures.append(f"attune run exited {run.returncode}")
    report = os.path.join(campaign, "REPORT.md")
    text = open(report).read() if os.path.exists(report) else ""
    if not text:
        failures.append("no REPORT.md")
    if "never measured" in text:
        failures.append("the baseline was never measured")
    try:
        js = json.loads(status.stdout)
    except ValueError:
        js = None
        failures.append("attune status --json did not print JSON: " + status.stdout[:300] + status.stderr[:300])
    if js is not None:
        print(json.dumps(js, indent=1)[:3000])
        if js.get("stack") != "slime" or js.get("launcher") != "kuberay":
            failures.append(f"campaign ran stack {js.get('stack')} on {js.get('launcher')}")
        if js.get("state") != "finished":
            failures.append(f"campaign state {js.get('state')}")
        if js.get("candidates", 0) < 1 or js.get("failed_jobs", 1) != 0:
            failures.append(f"{js.get('candidates')} candidates, {js.get('failed_jobs')} failed jobs")
        # The stand-in's model makes a larger micro-batch / token cap or a larger SGLang memory
        # fraction faster: the tuner must find a real speed-up from the perf lines.
        if not js.get("leader") or (js.get("speedup") or 0) <= 1.02:
            failures.append(f"no speed-up found (leader {js.get('leader')}, speedup {js.get('speedup')})")
    # The stand-in recipe trains on 1 x 4 actor GPUs with 4 more for the rollout engines (not
    # colocated): every job asks for, reserves and is charged 8 GPUs, and its RayJob requests them.
    events = subprocess.run([args.attune, "events", campaign, "--json"], cwd=ROOT, capture_output=True, text=True)
    requested = []
    for line in events.stdout.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") == "JobRequested":
            requested.append(e["data"])
    if not requested or any(r.get("devices") != 8 or r.get("nodes") != 1 for r in requested):
        failures.append("jobs did not ask for actor + rollout GPUs (8 on 1 node): " +
                        str([(r.get("job"), r.get("devices"), r.get("nodes")) for r in requested]))
    manifests = [os.path.join(campaign, "jobs", r["job"], "rayjob.yaml") for r in requested]
    gpus = [open(m).read().count("nvidia.com/gpu: 8") for m in manifests if os.path.exists(m)]
    if not gpus or min(gpus) < 1:
        failures.append(f"RayJob manifests do not request 8 GPUs ({len(gpus)} manifests found)")
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print(f"slime_kuberay_e2e: {'ok' if not failures else 'FAILED'} ({workdir})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
