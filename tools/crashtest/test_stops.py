#!/usr/bin/env python3
"""Self-test of the stop checks (stops.py): each is shown to fire on the fault it exists for, and
to stay quiet on a correct log. Also: a stop is delivered only once the handlers are installed.
Exit 0 when every case behaves, 1 otherwise."""
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stops  # noqa: E402


class FakeSuite:
    def __init__(self):
        self.violations = []

    def violation(self, where, what):
        self.violations.append(f"{where}: {what}")


def ev(seq, kind, **data):
    return {"seq": seq, "type": kind, "data": data}


def finished(seq, job, cancelled):
    return ev(seq, "JobFinished", job=job, cancelled_by_engine=cancelled)


CANCEL = stops.StopPlan(signal.SIGTERM, "cancel", 0.0)
LEAVE = stops.StopPlan(signal.SIGINT, "leave", 0.0)
FAILURES = []


def expect(name, violations, fragment):
    """fragment None: no violation expected; else one containing it."""
    ok = not violations if fragment is None else any(fragment in v for v in violations)
    if not ok:
        FAILURES.append(f"{name}: expected {fragment or 'no violation'}, got {violations}")
    print(f"{'ok  ' if ok else 'FAIL'} {name}")


def pause_case(name, plan, events, fragment):
    s = FakeSuite()
    stops.check_pause(s, name, "/nonexistent", plan, events)
    expect(name, s.violations, fragment)


def cancel_case(name, events, submissions, fragment):
    s = FakeSuite()
    stops.check_cancellations(s, name, events, submissions)
    expect(name, s.violations, fragment)


def main():
    base = [ev(1, "CampaignStarted"), ev(2, "JobRequested", job="j1"), ev(3, "JobSubmitted", job="j1")]
    cancelled = base + [ev(4, "JobCancelRequested", job="j1"), finished(5, "j1", True)]
    pause_case("clean cancel pause", CANCEL,
               cancelled + [ev(6, "CampaignPaused", on_stop="cancel", jobs=[])], None)
    pause_case("pause not last", LEAVE, base + [ev(4, "CampaignPaused", on_stop="leave_running",
                                                   jobs=["j1"]), ev(5, "CampaignResumed")],
               "not CampaignPaused")
    pause_case("on_stop recorded wrong", LEAVE,
               base + [ev(4, "CampaignPaused", on_stop="cancel", jobs=[])], "on_stop")
    pause_case("cancel pause left a job uncancelled", CANCEL,
               base + [ev(4, "CampaignPaused", on_stop="cancel", jobs=["j1"])], "without a JobCancelRequested")
    pause_case("leave pause with a job in flight", LEAVE,
               base + [ev(4, "CampaignPaused", on_stop="leave_running", jobs=["j1"])], None)
    cancel_case("clean cancellation", cancelled, ["j1"], None)
    cancel_case("cancelled job never finished", cancelled[:-1], ["j1"], "no JobFinished")
    cancel_case("cancelled job counted as a result", cancelled[:-1] + [finished(5, "j1", False)],
                ["j1"], "cancelled_by_engine False")
    cancel_case("cancelled job started twice", cancelled, ["j1", "j1"], "started 2 times")
    cancel_case("cancellation never requested", base + [finished(4, "j1", True)], ["j1"],
                "without a JobCancelRequested")

    # A signal before the handlers exist would kill with the default action: deliver() waits.
    script = "import signal,sys,time; time.sleep(0.3); signal.signal(signal.SIGTERM, lambda *a: sys.exit(3)); time.sleep(30)"
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, start_new_session=True)
    plan = stops.StopPlan(signal.SIGTERM, "leave", 0.0)
    # Python installs its own SIGINT handler; the stop waits for SIGTERM too.
    _, signalled, hung = stops.deliver(proc, plan, started)
    expect("signal waits for the handlers", [] if proc.returncode == 3 and signalled and not hung
           else [f"exit {proc.returncode}, signalled {signalled}, hung {hung}"], None)
    plan = stops.draw_plan(random.Random(1), 1.0)
    expect("plans are well formed", [] if plan.on_stop in ("cancel", "leave") and 0 <= plan.after_s <= 1
           else [str(plan)], None)
    print(f"{len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
