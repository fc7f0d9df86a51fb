#!/usr/bin/env python3
"""Per-stack exact-parse and right-triage rates of attune's log readers on an INDEX.csv of excerpts.

    tools/log_check/log_check.py [--index ../shared/fixtures/logs/INDEX.csv] [--attune build/bin/attune]
                                 [--json] [--verbose]

The index has the columns of ../shared/fixtures/logs/INDEX.csv: `file` (next to the index), `kind`,
`expected`. Each row is read through the attune CLI (`attune log parse|triage --stack S --json`),
exactly as a campaign's stack reads a job log:

  kind                     stack      right when
  iteration                megatron   iterations, milliseconds and losses all equal the expected
  automodel_iteration      automodel  iterations, losses and every other expected series equal
  memory                   megatron   a memory record with the expected numbers is read
  slime_perf               slime      rollout ids, step ids and every listed key's values equal
  failure_<k>              megatron   failure-right: the kind is one <k> allows;
                                      evidence-exact: the evidence is the expected line
  slime_failure_<k>        slime      the same (kinds the tool does not know: any failure is right)

Prints one line per stack and measure (exact/right over rows), then the misses with what differed.
Exit status 0 when it ran (whatever the rates), 2 on bad input (a missing index or attune).
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys

# What the index's failure kinds allow the triage to answer.
FAILURE_KINDS = {
    "oom": {"oom", "host_oom"},  # the index's "oom" rows include host (cgroup) OOM kills
    "host_oom": {"host_oom"},
    "nccl_error": {"nccl_error", "nccl_timeout"},
    "nccl": {"nccl_error", "nccl_timeout"},
    "nccl_timeout": {"nccl_timeout"},
    "hang": {"hang"},
    "config": {"config_error"},
    "config_error": {"config_error"},
    "launch": {"launch_error"},
    "illegal_memory": {"illegal_memory"},
}


def near(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def series_equal(got, want):
    return len(got) == len(want) and all(near(g, w) for g, w in zip(got, want))


class Runner:
    def __init__(self, attune, log_dir):
        self.attune = attune
        self.log_dir = log_dir

    def run(self, sub, stack, name, extra=()):
        path = os.path.join(self.log_dir, name)
        cmd = [self.attune, "log", sub, "--stack", stack, path, "--json", *extra]
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()[:300]}")
        return json.loads(done.stdout)


def check_iterations(r, row, stack):
    want = json.loads(row["expected"])
    got = r.run("parse", stack, row["file"])["iterations"]
    diffs = []
    iters = [g["iteration"] for g in got]
    if iters != want.get("iters", []):
        diffs.append(f"iterations {iters} != {want.get('iters')}")
    if want.get("ms"):
        ms = [g["step_time_ms"] for g in got]
        if not series_equal(ms, want["ms"]):
            diffs.append(f"ms {ms} != {want['ms']}")
    if "loss" in want:
        loss = [g.get("loss") for g in got]
        if not series_equal(loss, want["loss"]):
            diffs.append(f"loss {loss} != {want['loss']}")
    for key in ("mem_gib", "tps", "tps_per_gpu"):
        if key in want:
            vals = [g.get("extra", {}).get(key) for g in got]
            if not series_equal(vals, want[key]):
                diffs.append(f"{key} {vals} != {want[key]}")
    return diffs


def check_memory(r, row):
    fields = {}
    for piece in row["expected"].split("|")[1:]:
        if ":" in piece:
            k, v = piece.split(":", 1)
            fields[k.strip()] = float(v)
    got = r.run("parse", "megatron", row["file"]).get("memory", [])
    for m in got:
        if (near(m["allocated_mb"], fields.get("allocated")) and
                near(m["max_allocated_mb"], fields.get("max allocated")) and
                near(m["max_reserved_mb"], fields.get("max reserved"))):
            return []
    return [f"no memory record with {fields} among {len(got)} records"]


def check_slime_perf(r, row):
    want = json.loads(row["expected"])
    got = r.run("parse", "slime", row["file"])["iterations"]
    steps = [g for g in got if g.get("extra", {}).get("slime/train_step")]
    rollouts = [g for g in got if not g.get("extra", {}).get("slime/train_step")]
    diffs = []
    if [g["iteration"] for g in rollouts] != want.get("rollout_ids", []):
        diffs.append(f"rollout ids {[g['iteration'] for g in rollouts]} != {want.get('rollout_ids')}")
    if [g["iteration"] for g in steps] != want.get("step_ids", []):
        diffs.append(f"step ids {[g['iteration'] for g in steps]} != {want.get('step_ids')}")
    for key, values in want.items():
        if key in ("rollout_ids", "step_ids") or not isinstance(values, list):
            continue
        source = rollouts if key.startswith(("perf/", "rollout/")) else steps
        if key == "train/loss":
            vals = [g.get("loss") for g in source]
        elif key == "train/grad_norm":
            vals = [g.get("grad_norm") for g in source]
        else:
            vals = [g.get("extra", {}).get(key) for g in source]
        if not series_equal(vals, values):
            diffs.append(f"{key} {vals} != {values}")
    return diffs


def triage(r, row, stack):
    want = row["expected"]
    if want.startswith("{"):
        want = json.loads(want)["evidence"]
    return want, r.run("triage", stack, row["file"], ["--exit-code", "1", "--state", "failed"])


def check_failure_kind(r, row, stack, kind):
    _, got = triage(r, row, stack)
    allowed = FAILURE_KINDS.get(kind)
    if allowed is not None and got["kind"] not in allowed:
        return [f"kind {got['kind']} (rule {got.get('signature')}) not in {sorted(allowed)}"]
    if allowed is None and got["kind"] == "none":
        return ["no failure found"]
    return []


def check_evidence(r, row, stack):
    want, got = triage(r, row, stack)
    if got.get("evidence", "").strip() != want.strip():
        return [f"evidence line {got.get('line')} ({got.get('signature')}) {got.get('evidence', '')[:140]!r} "
                f"!= {want[:140]!r}"]
    return []


def classify(row):
    """[(stack, measure, checker)] for a row; empty for kinds this tool does not score."""
    kind = row["kind"]
    if kind == "iteration":
        return [("megatron", "iteration-exact", lambda r: check_iterations(r, row, "megatron"))]
    if kind == "automodel_iteration":
        return [("automodel", "iteration-exact", lambda r: check_iterations(r, row, "automodel"))]
    if kind == "memory":
        return [("megatron", "memory-exact", lambda r: check_memory(r, row))]
    if kind == "slime_perf":
        return [("slime", "iteration-exact", lambda r: check_slime_perf(r, row))]
    for prefix, stack in (("slime_failure_", "slime"), ("failure_", "megatron")):
        if kind.startswith(prefix):
            k = kind[len(prefix):]
            return [(stack, "failure-right", lambda r: check_failure_kind(r, row, stack, k)),
                    (stack, "evidence-exact", lambda r: check_evidence(r, row, stack))]
    return []


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", default=os.path.join(root, "..", "shared", "fixtures", "logs", "INDEX.csv"))
    ap.add_argument("--attune", default=os.path.join(root, "build", "bin", "attune"))
    ap.add_argument("--json", action="store_true", help="machine-readable summary")
    ap.add_argument("--verbose", action="store_true", help="list the rows that were right too")
    args = ap.parse_args()
    if not os.path.isfile(args.index):
        print(f"log_check: no index at {args.index}; pass --index PATH/INDEX.csv", file=sys.stderr)
        return 2
    if not os.access(args.attune, os.X_OK):
        print(f"log_check: {args.attune} is not an executable attune; build it (tools/setup.sh) or pass --attune",
              file=sys.stderr)
        return 2
    runner = Runner(args.attune, os.path.dirname(os.path.abspath(args.index)))
    tally, misses, skipped = {}, [], []
    with open(args.index, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        checks = classify(row)
        if not checks:
            skipped.append(row["file"])
        for stack, measure, check in checks:
            try:
                diffs = check(runner)
            except (RuntimeError, ValueError, KeyError) as e:
                diffs = [f"could not check: {e}"]
            t = tally.setdefault((stack, measure), [0, 0])
            t[1] += 1
            if not diffs:
                t[0] += 1
                if args.verbose:
                    print(f"  ok   {stack:9} {measure:15} {row['file']}")
            else:
                misses.append((stack, f"{row['file']} ({measure})", diffs))
    if args.json:
        print(json.dumps({"rates": [{"stack": s, "measure": m, "right": t[0], "rows": t[1]}
                                    for (s, m), t in sorted(tally.items())],
                          "misses": [{"stack": s, "file": f, "diffs": d} for s, f, d in misses],
                          "skipped": skipped}, indent=2))
        return 0
    for (stack, measure), (right, n) in sorted(tally.items()):
        print(f"{stack:10} {measure:16} {right:3}/{n:<3} ({100.0 * right / n:.0f}%)")
    for stack, name, diffs in misses:
        print(f"  miss {stack:9} {name}: " + "; ".join(diffs))
    if skipped:
        print(f"  not scored (kind unknown to this tool): {', '.join(skipped)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
