#!/usr/bin/env python3
"""The kill -9 suite on the KubeRay launcher: starts the Kubernetes API server test double
(tests/k8s_double/) with a token limited to namespace team-a and to the Role that `attune kuberay
rbac` prints, points $KUBECONFIG at it, and runs tools/crashtest/crashtest.py on a KubeRay
workflow (real minigpt jobs run by the double's stand-in operator). Its reference run is an
uninterrupted minigpt campaign on KubeRay, end to end. Then it checks, from the double's own
audit of every RayJob creation (the API server's view, not the launcher's):

  - duplicates: every (attune.owner, attune.job) pair was created at most once, i.e. exactly one
    RayJob per job name in every campaign;
  - orphans: no RayJob is left unfinished and no driver process is left running;
  - every job the campaigns submitted has its RayJob (submissions.log names match the audit).

crashtest.py itself checks the rest (no acknowledged event lost, budget charged = the jobs'
GPUs × their RayJobs' own start/end, nothing left in flight).

  crash_kuberay.py --attune build/bin/attune --kills 4 [--workdir DIR] [--kubectl PATH]
Exit 0 when every check held, 1 on a violation, 77 when kubectl or the double's packages are
missing (CTest: skipped).
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
PYTHON = "/usr/bin/python3"
DOUBLE = os.path.join(ROOT, "tests", "k8s_double")


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def start_double(args, state):
    crd = os.path.join(args.shared, "fixtures", "kuberay", "ray.io_rayjobs.yaml")
    if not os.path.exists(crd):
        skip(f"no RayJob CRD at {crd}")
    if subprocess.run([PYTHON, "-c", "import jsonschema, yaml"]).returncode != 0:
        skip("the double needs python3-jsonschema and python3-yaml")
    if shutil.which(args.kubectl) is None and not os.access(args.kubectl, os.X_OK):
        skip(f"no kubectl ({args.kubectl})")
    role = os.path.join(state, "role.yaml")
    with open(role, "w") as f:
        f.write(subprocess.run([args.attune, "kuberay", "rbac", "--namespace", "team-a"],
                               check=True, capture_output=True, text=True).stdout)
    kubeconfig = os.path.join(state, "kubeconfig")
    log = open(os.path.join(state, "double.log"), "w")
    proc = subprocess.Popen([PYTHON, os.path.join(DOUBLE, "k8s_double.py"), "--crd", crd,
                             "--state-dir", state, "--workdir", ROOT,
                             "--port-file", os.path.join(state, "port"),
                             "--token", "tok-a=team-a", "--role", role, "--strict-fields",
                             "--kubeconfig-out", kubeconfig, "--kube-namespace", "team-a",
                             "--nodes", "4", "--gpus-per-node", "8"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(300):
        if os.path.exists(os.path.join(state, "port")):
            return proc, kubeconfig
        time.sleep(0.1)
    proc.kill()
    skip("the API server double did not start: " + open(os.path.join(state, "double.log")).read())


def double_state(state):
    out = subprocess.run([PYTHON, os.path.join(DOUBLE, "double_ctl.py"), state, "state"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def submissions(workdir):
    """(campaign dir, job) of every submissions.log line the KubeRay launchers wrote."""
    found = []
    for dirpath, _, files in os.walk(workdir):
        if os.path.basename(dirpath) == "kuberay" and "submissions.log" in files:
            with open(os.path.join(dirpath, "submissions.log")) as f:
                found += [(os.path.dirname(dirpath), line.split()[0]) for line in f if line.strip()]
    return found


def check_double(state, workdir):
    violations = []
    created = collections.Counter()
    with open(os.path.join(state, "audit.jsonl")) as f:
        for line in f:
            record = json.loads(line)
            if record.get("event") == "rayjob_created":
                created[(record["labels"].get("attune.owner"), record.get("job"))] += 1
    dupes = {k: n for k, n in created.items() if n > 1}
    for (owner, job), n in sorted(dupes.items()):
        violations.append(f"job {job} (owner {owner}) has {n} RayJobs")
    snapshot = double_state(state)
    # Give the operator a moment to finish deletions and TTLs that the last campaign started.
    for _ in range(50):
        unfinished = [j["metadata"]["name"] for j in snapshot["rayjobs"]
                      if j.get("status", {}).get("jobDeploymentStatus") not in
                      ("Complete", "Failed", "ValidationFailed")]
        if not unfinished and not snapshot["live_processes"]:
            break
        time.sleep(0.2)
        snapshot = double_state(state)
    for name in unfinished:
        violations.append(f"orphan: RayJob {name} never finished")
    for proc in snapshot["live_processes"]:
        violations.append(f"orphan: driver process of {proc} still running")
    jobs = {job for _, job in submissions(workdir)}
    audited = {job for _, job in created}
    if jobs - audited:
        violations.append(f"submitted but never created: {sorted(jobs - audited)}")
    return violations, sum(created.values()), len(dupes), len(unfinished) + len(snapshot["live_processes"])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--attune", required=True)
    p.add_argument("--kills", type=int, default=4)
    p.add_argument("--workdir")
    p.add_argument("--kubectl", default=os.environ.get("ATTUNE_KUBECTL", "kubectl"))
    p.add_argument("--shared", default=os.environ.get("ATTUNE_SHARED_DIR",
                                                      os.path.join(ROOT, "..", "shared")))
    p.add_argument("--workflow", default=os.path.join(ROOT, "tests", "fixtures", "crash",
                                                      "kuberay-small.yaml"))
    args = p.parse_args()
    args.attune = os.path.abspath(args.attune)
    workdir = args.workdir or tempfile.mkdtemp(prefix="attune-crash-kuberay-")
    shutil.rmtree(workdir, ignore_errors=True)
    state = os.path.join(workdir, "double")
    os.makedirs(state)
    proc, kubeconfig = start_double(args, state)
    try:
        env = dict(os.environ, KUBECONFIG=kubeconfig)
        kubectl_dir = os.path.dirname(os.path.abspath(shutil.which(args.kubectl) or args.kubectl))
        env["PATH"] = kubectl_dir + os.pathsep + env.get("PATH", "")
        rc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "crashtest", "crashtest.py"),
                             "--attune", args.attune, "--workflow", args.workflow,
                             "--kills", str(args.kills), "--workdir", os.path.join(workdir, "runs"),
                             "--nondeterministic", "--cwd", ROOT], env=env).returncode
        violations, count, dupes, orphans = check_double(state, os.path.join(workdir, "runs"))
    finally:
        subprocess.run([PYTHON, os.path.join(DOUBLE, "double_ctl.py"), state, "stop"])
        proc.wait(timeout=30)
    for v in violations:
        print(f"VIOLATION (API server's view): {v}", file=sys.stderr)
    print(f"crash_kuberay: {count} RayJobs created, {dupes} duplicate RayJobs, {orphans} orphans "
          f"(crashtest exit {rc}; {workdir})")
    return 0 if rc == 0 and not violations else 1


if __name__ == "__main__":
    sys.exit(main())
