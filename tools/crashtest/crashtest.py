#!/usr/bin/env python3
"""The kill -9 suite: runs campaigns, kills the engine with SIGKILL at random moments and at named
crash points, restarts it until the campaign finishes, and checks after every run that

  1. no acknowledged event was lost (the engine appends each acknowledged seq to --ack-file; after
     every kill the log must still hold at least that many events, and `attune verify` must pass);
  2. no job was submitted twice (launchers append every real submission to
     <campaign>/<launcher dir>/submissions.log; real jobs started through audited_job.py also
     record their own start) and none is left in flight, forgotten or recorded submitted twice;
  3. the GPU-hours charged equal the sum of the jobs' device hours;
  4. with the same seed, the final leader, RESULTS.md and REPORT.md are identical to an
     uninterrupted run (wall-clock timestamps aside), and so is the set of jobs started;
  5. for launchers that run real processes (local): after every kill each started job is still
     running under its wrapper or has recorded its end, the engine's JobFinished agrees with the
     wrapper's record, no job inherited a descriptor into the campaign, and once the campaign has
     finished no process is left that refers to the campaign directory (realprocs.py).

With --signals FRACTION, that share of the engine starts get SIGTERM or SIGINT instead of a kill,
run with --on-stop cancel or leave; some of them are also killed inside the pause/cancel path (a
crash point only a stop reaches, or a SIGKILL up to 0.5 s after the signal). An engine that pauses
(exit 3) is checked like a killed one, plus: its log ends with CampaignPaused, and with --on-stop
cancel no job was left in flight uncancelled. At the end every job with a JobCancelRequested must
have finished with cancelled_by_engine and been started at most once (stops.py).

Only the simulated launcher is deterministic. For any other launcher (or with --nondeterministic)
check 4 cannot hold — real measurements differ, so the agent's choices and the jobs differ — and
is skipped, which the output says; checks 1-3 and 5 still apply. A campaign in which the engine
cancelled a job is not compared either (the cancelled attempt is charged, and the step runs another),
which the output also says; a campaign paused with --on-stop leave must still equal the reference.

Usage:
  crashtest.py --attune build/bin/attune --workflow W.yaml [--workflow W2.yaml] --kills 50
               [--seed 1] [--workdir DIR] [--json] [--nondeterministic] [--cwd DIR] [--verbose]
               [--sabotage-double-start] [--signals FRACTION]
Exit 0 when every check held; 1 when a violation was found (each is printed); 2 on bad usage.
With --sabotage-double-start (a self-test) exit 0 only when the double start it causes is caught.
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

import realprocs
import stops

CRASH_POINTS = [
    "log.append.before",
    "log.append.after",
    "job.requested",
    "job.submitted",
    "job.ended",
    "report.writing",
]
DETERMINISTIC_LAUNCHERS = {"sim"}
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?")


class Suite:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.kills = 0
        self.restarts = 0
        self.kills_during_jobs = 0  # kills that left real jobs running under their wrappers
        self.sabotaged = None  # the job hidden by --sabotage-double-start
        self.violations = []
        self.skipped = []  # workflows whose reference comparison was skipped (nondeterministic)
        self.env = dict(os.environ)
        self.deterministic = True  # of the workflow being run; set from its reference run
        self.signals = getattr(args, "signals", 0.0) or 0.0  # share of starts that get SIGTERM/SIGINT
        self.pauses = 0  # starts that paused cleanly (exit 3)
        self.cancels = 0  # jobs the engine cancelled (JobCancelRequested), over finished campaigns
        self.signals_sent = 0  # signals that reached an engine catching them
        self.kills_while_stopping = 0  # SIGKILLs (or crash points) that landed after a signal
        self.cancel_skipped = []  # runs not compared with the reference because a job was cancelled
        self.leave_paused_compared = 0  # runs with only leave-pauses, compared with the reference
        self.pauses_during_jobs = 0  # pauses that left real jobs running (--on-stop leave)
        self.last_signalled = False  # whether the last run_engine's stop signal reached the engine

    # -- running the engine -------------------------------------------------------------------
    def run_engine(self, workflow, campaign, ack_file, crash_at=None, kill_after=None, stop=None):
        """(exit code, seconds, stderr). `stop` (a stops.StopPlan) signals the engine instead of
        killing it; self.last_signalled then says whether the signal reached it."""
        env = dict(self.env)
        env.pop("ATTUNE_CRASH_AT", None)
        # Real jobs started through tools/crashtest/audited_job.py record each start here.
        env["ATTUNE_CRASHTEST_AUDIT"] = self.audit_file(campaign)
        if stop:
            crash_at = stop.crash_at
        if crash_at:
            env["ATTUNE_CRASH_AT"] = crash_at
        # One campaign id for the reference and every crash run, so their reports and job names
        # compare equal (the default id carries random digits).
        cmd = [self.args.attune, "run", workflow, "--dir", campaign, "--ack-file", ack_file,
               "--campaign-id", "campaign"]
        if stop:
            cmd += ["--on-stop", stop.on_stop]
        start = time.monotonic()
        # From the repository root: recipes' entry points (tools/minigpt/...) are relative to it.
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True, cwd=self.args.cwd)
        self.last_signalled = False
        if stop:
            err, self.last_signalled, hung = stops.deliver(proc, stop, start)
            if hung:
                self.violation(f"{os.path.basename(campaign)} {stop.describe()}",
                               f"the engine had not stopped {stops.STOP_LIMIT_S:.0f} s after the "
                               f"signal; killed it")
            return proc.returncode, time.monotonic() - start, err.decode(errors="replace")
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

    def check_jobs_after_kill(self, where, campaign):
        """Real processes: every started job is still running or has recorded its end."""
        problems, running = realprocs.check_records_after_kill(campaign)
        for problem in problems:
            self.violation(where, problem)
        if running:
            self.kills_during_jobs += 1
        return running

    def hide_running_job(self, campaign):
        """Self-test of the suite: moves a running job's record away, as a launcher that forgot the
        job would, so that the restarted engine starts it a second time."""
        for name, record in sorted(realprocs.job_records(campaign).items()):
            if os.path.exists(os.path.join(record, "start.json")) and \
                    not os.path.exists(os.path.join(record, "end.json")):
                os.rename(record, record + ".hidden")
                print(f"crashtest: sabotage: hid the record of running job {name}; the checks must "
                      f"now report it started twice", file=sys.stderr, flush=True)
                return name
        return None

    def check_no_orphans(self, where, campaign):
        for orphan in realprocs.wait_for_no_orphans(campaign):
            self.violation(where, f"process left running after the campaign finished: {orphan}")

    @staticmethod
    def audit_file(campaign):
        return os.path.join(os.path.dirname(campaign), "audit.log")

    def check_audit(self, where, campaign, requested):
        """The jobs' own record of their starts (audited_job.py): none twice, none unrequested, and
        no job holding a descriptor into the campaign other than its stdout/stderr (leaked from the
        launcher or the wrapper)."""
        path = self.audit_file(campaign)
        if not os.path.exists(path):
            return
        pids = {}
        root = os.path.realpath(campaign) + "/"
        with open(path) as f:
            for line in f:
                try:
                    start = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line torn by a kill of the job itself cannot count as a start
                pids.setdefault(start.get("job"), []).append(str(start.get("pid")))
                leaked = {fd: t for fd, t in start.get("inherited", {}).items() if t.startswith(root)}
                if leaked:
                    self.violation(where, f"job {start.get('job')} inherited descriptors into the "
                                          f"campaign: {leaked}")
        for name, started in sorted(pids.items()):
            if len(started) > 1:
                self.violation(where, f"job {name} really started {len(started)} times (pids "
                                      f"{', '.join(started)}, from the job itself)")
        unrequested = sorted(set(pids) - requested)
        if unrequested:
            self.violation(where, f"processes ran for jobs never requested: {unrequested}")

    def submissions(self, campaign):
        """Every job the launchers really started: each keeps <campaign>/<its dir>/submissions.log.
        The simulated launcher appends a job's line after its record (<dir>/jobs/<job>.json) is
        durable, so a kill between the two drops the line, never adds a false one: a record without
        a line is a job that started once (its line lost), not a job that never started."""
        names = []
        if not os.path.isdir(campaign):
            return names
        for entry in sorted(os.listdir(campaign)):
            path = os.path.join(campaign, entry, "submissions.log")
            if os.path.isfile(path):
                with open(path) as f:
                    logged = [line.split()[0] for line in f if line.strip()]
                names += logged
                records = os.path.join(campaign, entry, "jobs")
                if os.path.isdir(records):
                    names += sorted(r[:-5] for r in os.listdir(records)
                                    if r.endswith(".json") and r[:-5] not in logged)
        return names

    def check_final(self, where, campaign, reference, leave_paused=False):
        """The checks at the end of a campaign. `leave_paused`: the engine paused with --on-stop
        leave during it, which must not change the result (counted when compared)."""
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
        submitted = [e["data"].get("job") for e in events or [] if e.get("type") == "JobSubmitted"]
        twice = sorted({n for n in submitted if submitted.count(n) > 1})
        if twice:
            self.violation(where, f"jobs recorded as submitted twice: {twice}")
        self.check_audit(where, campaign, requested)
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
        for problem in realprocs.check_finished_against_records(campaign, {f.get("job"): f for f in finished}):
            self.violation(where, problem)
        self.check_no_orphans(where, campaign)
        cancelled = stops.check_cancellations(self, where, events or [], names)
        self.cancels += len(cancelled)
        if reference and self.deterministic and cancelled:
            # A cancelled attempt is charged and the step runs another: budget, jobs and so the
            # agent's choices legitimately differ from the uninterrupted run.
            self.cancel_skipped.append(where)
            print(f"crashtest: {where}: the engine cancelled {len(cancelled)} job(s); skipping the "
                  f"comparison with the uninterrupted run for this campaign",
                  file=sys.stderr if self.args.json else sys.stdout, flush=True)
        elif reference and self.deterministic:
            self.leave_paused_compared += 1 if leave_paused else 0
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
        # Every run passes the same --campaign-id (run_engine), so job names and reports compare
        # equal; the simulated noise depends on the seed and the job's place, not on the id.
        campaign = os.path.join(root, "reference", "campaign")
        rc, seconds, err = self.run_engine(workflow, campaign, os.path.join(root, "reference.ack"))
        if rc != 0:
            raise SystemExit(f"crashtest: the uninterrupted run of {workflow} failed (exit {rc}): {err}")
        self.reference_status, _ = self.attune_json("status", campaign)
        launcher = (self.reference_status or {}).get("launcher", "")
        self.deterministic = launcher in DETERMINISTIC_LAUNCHERS and not self.args.nondeterministic
        if not self.deterministic:
            self.skipped.append(os.path.basename(workflow))
            print(f"crashtest: {os.path.basename(workflow)}: launcher '{launcher}' is not deterministic"
                  f"{' (--nondeterministic)' if self.args.nondeterministic else ''}; skipping the "
                  f"comparison with the uninterrupted run (leader, RESULTS.md, REPORT.md, set of jobs)",
                  file=sys.stderr if self.args.json else sys.stdout, flush=True)
        events, _ = self.events(campaign)
        requested = {e["data"].get("job") for e in events or [] if e.get("type") == "JobRequested"}
        self.check_audit(f"{os.path.basename(workflow)} reference", campaign, requested)
        self.check_no_orphans(f"{os.path.basename(workflow)} reference", campaign)
        return campaign, seconds

    def crash_run(self, workflow, root, index, kills_wanted, ref_seconds, reference):
        campaign = os.path.join(root, f"crash-{index}", "campaign")
        ack = os.path.join(root, f"crash-{index}.ack")
        where = f"{os.path.basename(workflow)} run {index}"
        kills_here = 0  # kills and pauses: the stops this run has survived
        leave_paused = False
        # Timed kills fall within the reference's duration. Where that is long (real jobs: tens of
        # seconds) they fall within 2 × its share per kill, so that the kills of one run spread
        # over the whole campaign instead of most being drawn after it has finished.
        kill_window = max(0.05, min(ref_seconds, max(1.0, 2.0 * ref_seconds / kills_wanted)))
        for attempt in range(kills_wanted * 4 + 20):
            crash_at, kill_after, stop = None, None, None
            if kills_here < kills_wanted:
                # Drawn only with --signals, so that without it the kills are those of before.
                if self.signals > 0 and self.rng.random() < self.signals:
                    stop = stops.draw_plan(self.rng, kill_window)
                elif self.rng.random() < 0.5:
                    crash_at = f"{self.rng.choice(CRASH_POINTS)}:{self.rng.randint(1, 6)}"
                else:
                    kill_after = self.rng.uniform(0.0, kill_window)
            rc, seconds, err = self.run_engine(workflow, campaign, ack, crash_at, kill_after, stop)
            self.restarts += 1
            self.signals_sent += 1 if self.last_signalled else 0
            if self.args.verbose:
                how = stop.describe() if stop else f"ATTUNE_CRASH_AT={crash_at}" if crash_at else (
                    f"kill after {kill_after:.2f} s" if kill_after is not None else "no kill")
                print(f"  {where} start {attempt + 1}: {how}: exit {rc} after {seconds:.2f} s"
                      f"{'' if not stop or self.last_signalled else ' (ended before the signal)'}",
                      file=sys.stderr, flush=True)
            if rc == stops.EXIT_PAUSED and stop and self.last_signalled:
                self.pauses += 1
                kills_here += 1
                leave_paused = leave_paused or stop.on_stop == "leave"
                self.check_pause_survived(f"{where} after pause {kills_here}", campaign, ack, stop)
                continue
            if rc == -signal.SIGKILL or rc == 128 + signal.SIGKILL:
                self.kills += 1
                kills_here += 1
                self.kills_while_stopping += 1 if self.last_signalled else 0
                self.check_acknowledged(f"{where} after kill {kills_here}", campaign, ack)
                running = self.check_jobs_after_kill(f"{where} after kill {kills_here}", campaign)
                if self.args.verbose and running:
                    print(f"    {running} job(s) left running under their wrappers", file=sys.stderr,
                          flush=True)
                if running and getattr(self.args, "sabotage_double_start", False) and not self.sabotaged:
                    self.sabotaged = self.hide_running_job(campaign)
                continue
            if rc == 0:
                break
            self.violation(where, f"engine exited {rc} after a restart: {err.strip()[-400:]}")
            return kills_here
        else:
            self.violation(where, "the campaign never finished")
            return kills_here
        self.check_acknowledged(f"{where} final", campaign, ack)
        self.check_final(where, campaign, reference, leave_paused)
        return kills_here

    def check_pause_survived(self, where, campaign, ack, stop):
        """After a clean pause (exit 3): what must hold after a kill, and that the log ends with the
        CampaignPaused the stop asked for (stops.check_pause)."""
        self.check_acknowledged(where, campaign, ack)
        events, err = self.events(campaign)
        if events is None:
            self.violation(where, f"cannot read events after the pause: {err}")
        else:
            stops.check_pause(self, where, campaign, stop, events)
        problems, running = realprocs.check_records_after_kill(campaign)
        for problem in problems:
            self.violation(where, problem)
        self.pauses_during_jobs += 1 if running else 0
        if self.args.verbose and running:
            print(f"    paused with {running} job(s) running under their wrappers", file=sys.stderr,
                  flush=True)

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
            if self.args.verbose:
                print(f"  {os.path.basename(workflow)}: uninterrupted run {ref_seconds:.1f} s",
                      file=sys.stderr, flush=True)
            stops_before, during_before = self.kills + self.pauses, self.kills_during_jobs
            index = 0
            while self.kills + self.pauses - stops_before < per_workflow:
                index += 1
                got = self.crash_run(workflow, wroot, index, min(8, per_workflow), ref_seconds, reference)
                if got == 0 and index > per_workflow * 2:
                    self.violation(workflow, "no kill landed: the campaign finishes before any kill")
                    break
            if realprocs.job_records(reference) and self.kills_during_jobs == during_before:
                self.violation(workflow, "no kill landed while a real job ran, so restarting with "
                                         "jobs in flight was not tested; use more --kills")
        summary = {"kills": self.kills, "restarts": self.restarts, "violations": len(self.violations),
                   "seconds": round(time.monotonic() - started, 1), "workdir": root,
                   "kills_during_jobs": self.kills_during_jobs,
                   "reference_comparison_skipped": self.skipped,
                   "pauses": self.pauses, "cancels": self.cancels, "signals": self.signals_sent,
                   "kills_while_stopping": self.kills_while_stopping,
                   "pauses_during_jobs": self.pauses_during_jobs,
                   "leave_paused_runs_compared": self.leave_paused_compared,
                   "reference_comparison_skipped_cancelled": self.cancel_skipped}
        if self.args.json:
            print(json.dumps(summary))
        else:
            notes = [f"{self.kills_during_jobs} while real jobs ran"] if self.kills_during_jobs else []
            notes += [f"{self.kills_while_stopping} while stopping"] if self.signals else []
            during = f" ({'; '.join(notes)})" if notes else ""
            stopping = ""
            if self.signals:
                stopping = (f" ({self.signals_sent} signals, {self.pauses_during_jobs} pauses with real "
                            f"jobs running, {self.leave_paused_compared} leave-paused runs compared "
                            f"with the reference, {len(self.cancel_skipped)} runs with cancels not)")
            print(f"crashtest: {self.kills} kills survived{during}, {self.pauses} pauses, "
                  f"{self.cancels} cancels{stopping}, {self.restarts} restarts, "
                  f"{len(self.violations)} violations, {summary['seconds']} s ({root})")
        if getattr(self.args, "sabotage_double_start", False):
            return self.sabotage_verdict()
        return 0 if not self.violations else 1

    def sabotage_verdict(self):
        """With --sabotage-double-start the suite tests itself: exit 0 when it caught the double
        start it caused (in submissions.log and from the job itself), 1 otherwise."""
        if not self.sabotaged:
            print("crashtest: sabotage: no kill left a job running, nothing was hidden; use more --kills")
            return 1
        caught = [v for v in self.violations if self.sabotaged in v and
                  ("submitted twice" in v or "really started" in v)]
        print(f"crashtest: sabotage of {self.sabotaged}: {'caught' if len(caught) >= 2 else 'NOT caught'} "
              f"({len(caught)} of the 2 expected reports)")
        return 0 if len(caught) >= 2 else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attune", required=True, help="the attune binary")
    p.add_argument("--workflow", action="append", required=True, help="a workflow to run (repeatable)")
    p.add_argument("--kills", type=int, default=50,
                   help="SIGKILLs to land in total (with --signals: SIGKILLs and pauses)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", help="where campaigns go (default: a new temp dir)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--verbose", action="store_true", help="one line per engine start on stderr")
    p.add_argument("--nondeterministic", action="store_true",
                   help="do not compare with the uninterrupted run (automatic for launchers other than sim)")
    p.add_argument("--cwd", default=REPO_ROOT,
                   help="working directory of the engine (default: the repository root, which "
                        "recipes' entry points are relative to)")
    p.add_argument("--sabotage-double-start", action="store_true",
                   help="self-test: after a kill, hide a running job's record so that it is started "
                        "twice; exits 0 only when the checks caught it")
    p.add_argument("--signals", type=float, default=0.0, metavar="FRACTION",
                   help="share of engine starts that get SIGTERM or SIGINT (random) instead of a "
                        "kill, with --on-stop cancel or leave (random), some also killed inside "
                        "the pause/cancel path; pauses count towards --kills (default 0: none)")
    p.add_argument("--reserve-charges", action="store_true",
                   help="jobs without launcher times are charged their reservation (do not compare)")
    args = p.parse_args()
    args.attune = os.path.abspath(args.attune)
    args.workflow = [os.path.abspath(w) for w in args.workflow]
    if args.workdir:
        args.workdir = os.path.abspath(args.workdir)
    if not 0.0 <= args.signals <= 1.0:
        print(f"crashtest: --signals must be a fraction between 0 and 1, not {args.signals}",
              file=sys.stderr)
        return 2
    if not os.access(args.attune, os.X_OK):
        print(f"crashtest: {args.attune} is not an executable attune binary", file=sys.stderr)
        return 2
    return Suite(args).run()


if __name__ == "__main__":
    sys.exit(main())
