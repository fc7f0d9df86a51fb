"""Graceful stops under fire, for the kill -9 suite (crashtest.py --signals FRACTION).

`attune run` pauses on SIGINT/SIGTERM at its next safe point and exits 3 after recording
CampaignPaused. With `--on-stop cancel` it first records JobCancelRequested for the job it is
driving, asks the launcher to cancel it, waits for the end and records JobFinished with
cancelled_by_engine; a resumed engine finishes a cancel-requested job as the engine's cancellation
and never submits it again. This module draws such stops, delivers them (optionally followed by a
SIGKILL or a crash point inside the pause/cancel path) and checks what a pause and a finished
campaign must show.
"""
import dataclasses
import os
import signal
import subprocess
import time

EXIT_PAUSED = 3

# Crash points that only a stop reaches (engine/src/steps/job_driver.cc, campaign_runner.cc), so
# that arming one with :1 kills the engine inside the pause/cancel path, whatever ran before.
PAUSE_CRASH_POINTS = [
    "job.cancel_requested",   # JobCancelRequested durable, the launcher not yet asked
    "job.cancel_confirmed",   # the launcher confirmed the end, JobFinished not yet written
    "campaign.pausing",       # the stop reached its safe point, CampaignPaused not yet written
]
CRASH_AFTER_SIGNAL = 0.2     # share of signalled starts that also arm a pause crash point
KILL_AFTER_SIGNAL = 0.3      # share that get a SIGKILL 0-0.5 s after the signal (half < 0.125 s)
STOP_LIMIT_S = 120.0         # a signalled engine must have stopped by then (cancel waits <= 10 s a job)
ON_STOP_RECORDED = {"cancel": "cancel", "leave": "leave_running"}


@dataclasses.dataclass
class StopPlan:
    signum: int               # SIGTERM or SIGINT
    on_stop: str              # "cancel" or "leave", passed as attune run --on-stop
    after_s: float            # delay from the start to the signal
    crash_at: str = None      # ATTUNE_CRASH_AT for this start (a pause crash point)
    kill_after_s: float = None  # SIGKILL the process group this long after the signal

    def describe(self):
        how = f"{signal.Signals(self.signum).name} after {self.after_s:.2f} s, --on-stop {self.on_stop}"
        if self.crash_at:
            how += f", ATTUNE_CRASH_AT={self.crash_at}"
        if self.kill_after_s is not None:
            how += f", SIGKILL {self.kill_after_s:.2f} s later"
        return how


def draw_plan(rng, window_s):
    plan = StopPlan(signum=rng.choice([signal.SIGTERM, signal.SIGINT]),
                    on_stop=rng.choice(["cancel", "leave"]),
                    after_s=rng.uniform(0.0, window_s))
    follow = rng.random()
    if follow < CRASH_AFTER_SIGNAL:
        # Only a cancelling stop reaches the cancellation's points.
        points = PAUSE_CRASH_POINTS if plan.on_stop == "cancel" else ["campaign.pausing"]
        plan.crash_at = f"{rng.choice(points)}:1"
    elif follow < CRASH_AFTER_SIGNAL + KILL_AFTER_SIGNAL:
        # Within 0.5 s, skewed short: a cancellation on the local launcher takes ~0.1 s.
        plan.kill_after_s = 0.5 * rng.random() ** 2
    return plan


def handlers_installed(pid):
    """True once process `pid` catches both SIGINT and SIGTERM (before that, either signal would
    kill it with the default action: a plain kill, not the stop this suite means to test)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    mask = int(line.split()[1], 16)
                    return all(mask & (1 << (s - 1)) for s in (signal.SIGINT, signal.SIGTERM))
    except (OSError, ValueError):
        pass
    return False


def _wait(proc, timeout_s):
    """The process's stderr once it has exited within `timeout_s`, else None (communicate can be
    called again after a timeout without losing output)."""
    try:
        return proc.communicate(timeout=max(0.0, timeout_s))[1]
    except subprocess.TimeoutExpired:
        return None


def deliver(proc, plan, started):
    """Signals the running engine as `plan` says and waits for it to end.
    Returns (stderr bytes, signalled, hung): signalled when the signal reached a live engine that
    catches it; hung when it had not stopped STOP_LIMIT_S after the signal (then it was killed)."""
    deadline = started + 10.0
    while not handlers_installed(proc.pid) and time.monotonic() < deadline:
        err = _wait(proc, 0.005)
        if err is not None:
            return err, False, False
    err = _wait(proc, started + plan.after_s - time.monotonic())
    if err is not None:
        return err, False, False
    # Ctrl-C reaches the terminal's whole process group; kill(1) and service managers name the pid.
    try:
        if plan.signum == signal.SIGINT:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return proc.communicate()[1], False, False
    limit = plan.kill_after_s if plan.kill_after_s is not None else STOP_LIMIT_S
    err = _wait(proc, limit)
    if err is not None:
        return err, True, False
    os.killpg(proc.pid, signal.SIGKILL)
    return proc.communicate()[1], True, plan.kill_after_s is None


def of_type(events, kind):
    return [e for e in events if e.get("type") == kind]


def check_pause(suite, where, campaign, plan, events):
    """After exit 3: the log ends with CampaignPaused recording the --on-stop given, and with
    --on-stop cancel no job was left in flight without a recorded cancellation."""
    if not events:
        suite.violation(where, "paused (exit 3) but the log holds no event")
        return
    last = events[-1]
    if last.get("type") != "CampaignPaused":
        suite.violation(where, f"paused (exit 3) but the log's last event is {last.get('type')} "
                               f"(seq {last.get('seq')}), not CampaignPaused")
        return
    data = last.get("data", {})
    want = ON_STOP_RECORDED[plan.on_stop]
    if data.get("on_stop") != want:
        suite.violation(where, f"CampaignPaused records on_stop {data.get('on_stop')!r} but the "
                               f"engine ran with --on-stop {plan.on_stop}")
    if plan.on_stop != "cancel":
        return
    cancel_requested = {e["data"].get("job") for e in of_type(events, "JobCancelRequested")}
    uncancelled = sorted(set(data.get("jobs", [])) - cancel_requested)
    if uncancelled:
        suite.violation(where, f"paused with --on-stop cancel but left {uncancelled} in flight "
                               f"without a JobCancelRequested")


def check_cancellations(suite, where, events, submissions):
    """At the end of a campaign: every job with a JobCancelRequested finished as the engine's
    cancellation and was started at most once; every engine cancellation was requested first.
    Returns the names of the cancelled jobs."""
    requested = {e["data"].get("job") for e in of_type(events, "JobCancelRequested")}
    finished = {e["data"].get("job"): e["data"] for e in of_type(events, "JobFinished")}
    for name in sorted(requested):
        data = finished.get(name)
        if data is None:
            suite.violation(where, f"job {name}: cancellation requested but no JobFinished")
        elif data.get("cancelled_by_engine") is not True:
            suite.violation(where, f"job {name}: cancellation requested but JobFinished has "
                                   f"cancelled_by_engine {data.get('cancelled_by_engine')}")
        starts = submissions.count(name)
        if starts > 1:
            suite.violation(where, f"job {name}: cancelled by the engine but started {starts} times "
                                   f"(submissions.log)")
    unrequested = sorted(n for n, d in finished.items() if d.get("cancelled_by_engine") and n not in requested)
    if unrequested:
        suite.violation(where, f"jobs recorded as cancelled_by_engine without a JobCancelRequested: "
                               f"{unrequested}")
    return sorted(requested)
