#!/usr/bin/env python3
"""The kill -9 suite: runs campaigns, kills the engine with SIGKILL at random moments and at named
crash points, restarts it until the campaign finishes, and checks after every run that

  1. no acknowledged event was lost (the engine appends each acknowledged seq to --ack-file; after
     every kill the log must still hold at least that many events, and `attune verify` must pass);
  2. no job was submitted twice (launchers append every real submission to
     <campaign>/<launcher dir>/submissions.log) and none is left in flight or forgotten;
  3. the GPU-hours charged equal the sum of the jobs' device hours;
  4. with the same seed, the final leader, RESULTS.md and REPORT.md are identical to an
     uninterrupted run (wall-clock timestamps aside).

Usage:
  crashtest.py --attune build/bin/attune --workflow W.yaml [--workflow W2.yaml] --kills 50
               [--seed 1] [--workdir DIR] [--json]
Exit 0 when every check held; 1 when a violation was found (each is printed); 2 on bad usage.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CRASH_POINTS = [
    "log.append.before",
    "log.append.after",
    "job.requested",
    "job.submitted",
    "job.ended",
    "report.writing",
]
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?")


class Suite:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.kills = 0
        self.restarts = 0
        self.violations = []
        self.env = dict(os.environ)

    # -- running the engine -------------------------------------------------------------------
    def run_engine(self, workflow, campaign, ack_file, crash_at=None, kill_after=None):
        env = dict(self.env)
        env.pop("ATTUNE_CRASH_AT", None)
        if crash_at:
            env["ATTUNE_CRASH_AT"] = crash_at
        cmd = [self.args.attune, "run", workflow, "--dir", campaign, "--ack-file", ack_file]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            _, err = proc.communicate(timeout=kill_after)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
        return proc.returncode, time.monotonic() - start, err.decode(errors="replace")

    def attune_json(self, *argv):
        out = subprocess.run([self.args.attune, *argv, "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            return None, out.stderr.strip()
        try:
            return json.loads(out.stdout), ""
        except json.JSONDecodeError as e:
            return None, f"not JSON ({e}): {out.stdout[:200]}"

    def events(self, campaign):
        """The campaign's events (`attune events --json` prints one JSON envelope per line)."""
        out = subprocess.run([self.args.attune, "events", campaign, "--json"], capture_output=True,
                             text=True)
        if out.returncode != 0:
            return None, out.stderr.strip()
        try:
            return [json.loads(line) for line in out.stdout.splitlines() if line.strip()], ""
        except json.JSONDecodeError as e:
            return None, f"not NDJSON ({e})"

    # -- checks --------------------------------------------------------------------------------
    def violation(self, where, what):
        self.violations.append(f"{where}: {what}")
        print(f"VIOLATION {where}: {what}", file=sys.stderr)

    def check_acknowledged(self, where, campaign, ack_file):
        acked = 0
        if os.path.exists(ack_file):
            with open(ack_file) as f:
                seqs = [int(x) for x in f.read().split() if x.strip().isdigit()]
            acked = max(seqs, default=0)
        if not os.path.isdir(campaign):
            if acked:
                self.violation(where, f"campaign directory vanished after seq {acked} was acknowledged")
            return
        verify = subprocess.run([self.args.attune, "verify", campaign], capture_output=True, text=True)
        if verify.returncode != 0 and acked == 0 and "no event log" in verify.stdout + verify.stderr:
            return  # killed before the first event was acknowledged: nothing to lose yet
        if verify.returncode != 0:
            self.violation(where, f"attune verify failed: {verify.stdout.strip()} {verify.stderr.strip()}")
            return
        events, err = self.events(campaign)
        if events is None:
            self.violation(where, f"cannot read events: {err}")
            return
        count = max((e.get("seq", 0) for e in events), default=0)
        if count != len(events):
            self.violation(where, f"event sequence has gaps: {len(events)} events, last seq {count}")
        if count < acked:
            self.violation(where, f"log holds {count} events but seq {acked} was acknowledged")

    def submissions(self, campaign):
        """Every job the launchers really started: each keeps <campaign>/<its dir>/submissions.log."""
        names = []
        if not os.path.isdir(campaign):
            return names
        for entry in sorted(os.listdir(campaign)):
            path = os.path.join(campaign, entry, "submissions.log")
            if os.path.isfile(path):
                with open(path) as f:
                    names += [line.split()[0] for line in f if line.strip()]
        return names

    def check_final(self, where, campaign, reference):
        names = self.submissions(campaign)
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            self.violation(where, f"jobs submitted twice: {', '.join(dupes)}")
        status, err = self.attune_json("status", campaign)
        if status is None:
            self.violation(where, f"attune status failed: {err}")
            return
        in_flight = status.get("jobs_in_flight", status.get("in_flight", []))
        if in_flight:
            self.violation(where, f"jobs left in flight after the campaign finished: {in_flight}")
        charged = status.get("budget", {}).get("charged_gpu_hours")
        events, err = self.events(campaign)
        finished = [e["data"] for e in events or [] if e.get("type") == "JobFinished"]
        requested = {e["data"].get("job") for e in events or [] if e.get("type") == "JobRequested"}
        done = {f.get("job") for f in finished}
        if requested - done:
            self.violation(where, f"jobs requested but never recorded as finished: {sorted(requested - done)}")
        if len(done) != len(finished):
            self.violation(where, "a job was recorded as finished twice")
        # The launcher's own times: devices × (end − start) of each job.
        device_hours = 0.0
        for f in finished:
            st = f.get("status", {})
            if st.get("start_time") is not None and st.get("end_time") is not None:
                device_hours += st.get("devices", 0) * (st["end_time"] - st["start_time"]) / 3600.0
        charged_sum = sum(f.get("charged_gpu_hours", 0.0) for f in finished)
        if charged is None or abs(charged - charged_sum) > 1e-6 * max(1.0, abs(charged_sum)):
            self.violation(where, f"budget charged {charged} but JobFinished events sum to {charged_sum}")
        if abs(charged_sum - device_hours) > 1e-6 * max(1.0, device_hours) and not self.args.reserve_charges:
            self.violation(where, f"charged {charged_sum} GPU-hours but the jobs ran {device_hours} device-hours")
        if reference:
            ref_names = self.submissions(reference)
            if sorted(set(names)) != sorted(set(ref_names)):
                self.violation(where, f"submitted jobs differ from the uninterrupted run: "
                                      f"{sorted(set(names) ^ set(ref_names))}")
            for name in ("RESULTS.md", "REPORT.md"):
                a, b = self.read_report(campaign, name), self.read_report(reference, name)
                if a != b:
                    self.violation(where, f"{name} differs from the uninterrupted run")
            if status.get("leader") != self.reference_status.get("leader"):
                self.violation(where, f"leader {status.get('leader')} != uninterrupted "
                                      f"{self.reference_status.get('leader')}")

    @staticmethod
    def read_report(campaign, name):
        path = os.path.join(campaign, name)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return TIMESTAMP.sub("<time>", f.read())

    # -- one campaign under fire ---------------------------------------------------------------
    def reference_run(self, workflow, root):
        # Every run's directory has the same name: the campaign id (and so every job name, which
        # seeds the simulated cluster's noise) comes from it.
        campaign = os.path.join(root, "reference", "campaign")
        rc, seconds, err = self.run_engine(workflow, campaign, os.path.join(root, "reference.ack"))
        if rc != 0:
            raise SystemExit(f"crashtest: the uninterrupted run of {workflow} failed (exit {rc}): {err}")
        self.reference_status, _ = self.attune_json("status", campaign)
        return campaign, seconds

    def crash_run(self, workflow, root, index, kills_wanted, ref_seconds, reference):
        campaign = os.path.join(root, f"crash-{index}", "campaign")
        ack = os.path.join(root, f"crash-{index}.ack")
        where = f"{os.path.basename(workflow)} run {index}"
        kills_here = 0
        for attempt in range(kills_wanted * 4 + 20):
            crash_at, kill_after = None, None
            if kills_here < kills_wanted:
                if self.rng.random() < 0.5:
                    crash_at = f"{self.rng.choice(CRASH_POINTS)}:{self.rng.randint(1, 6)}"
                else:
                    kill_after = self.rng.uniform(0.0, max(0.05, ref_seconds))
            rc, _, err = self.run_engine(workflow, campaign, ack, crash_at, kill_after)
            self.restarts += 1
            if rc == -signal.SIGKILL or rc == 128 + signal.SIGKILL:
                self.kills += 1
                kills_here += 1
                self.check_acknowledged(f"{where} after kill {kills_here}", campaign, ack)
                continue
            if rc == 0:
                break
            self.violation(where, f"engine exited {rc} after a restart: {err.strip()[-400:]}")
            return kills_here
        else:
            self.violation(where, "the campaign never finished")
            return kills_here
        self.check_acknowledged(f"{where} final", campaign, ack)
        self.check_final(where, campaign, reference)
        return kills_here

    def run(self):
        root = self.args.workdir or tempfile.mkdtemp(prefix="attune-crashtest-")
        os.makedirs(root, exist_ok=True)
        started = time.monotonic()
        per_workflow = max(1, self.args.kills // len(self.args.workflow))
        for w_index, workflow in enumerate(self.args.workflow):
            wroot = os.path.join(root, f"w{w_index}")
            shutil.rmtree(wroot, ignore_errors=True)
            os.makedirs(wroot)
            reference, ref_seconds = self.reference_run(workflow, wroot)
            kills_before = self.kills
            index = 0
            while self.kills - kills_before < per_workflow:
                index += 1
                got = self.crash_run(workflow, wroot, index, min(8, per_workflow), ref_seconds, reference)
                if got == 0 and index > per_workflow * 2:
                    self.violation(workflow, "no kill landed: the campaign finishes before any kill")
                    break
        summary = {"kills": self.kills, "restarts": self.restarts, "violations": len(self.violations),
                   "seconds": round(time.monotonic() - started, 1), "workdir": root}
        if self.args.json:
            print(json.dumps(summary))
        else:
            print(f"crashtest: {self.kills} kills survived, {self.restarts} restarts, "
                  f"{len(self.violations)} violations, {summary['seconds']} s ({root})")
        return 0 if not self.violations else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attune", required=True, help="the attune binary")
    p.add_argument("--workflow", action="append", required=True, help="a workflow to run (repeatable)")
    p.add_argument("--kills", type=int, default=50, help="SIGKILLs to land in total")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", help="where campaigns go (default: a new temp dir)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--reserve-charges", action="store_true",
                   help="jobs without launcher times are charged their reservation (do not compare)")
    args = p.parse_args()
    if not os.access(args.attune, os.X_OK):
        print(f"crashtest: {args.attune} is not an executable attune binary", file=sys.stderr)
        return 2
    return Suite(args).run()


if __name__ == "__main__":
    sys.exit(main())
