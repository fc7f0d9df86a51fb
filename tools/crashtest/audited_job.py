#!/usr/bin/python3
"""The kill -9 suite's witness inside a real job: records that the job really started, then
becomes the job's entry point (exec, same pid).

  python3 tools/crashtest/audited_job.py SCRIPT.py [ARGS...]

When ATTUNE_JOB_NAME (set by the local launcher) and ATTUNE_CRASHTEST_AUDIT (set by crashtest.py)
are both set, rank 0 of the job appends one JSON line to the audit file (O_APPEND, fsync) before
anything else runs: {"job": name, "pid": pid, "inherited": {fd: path}} — the descriptors above 2
that the job inherited from the launcher and the wrapper (it should hold none of theirs). This
record comes from the job itself, not from the launcher under test, so crashtest.py can prove from
it that no job ever started twice. Without the variables (a `--help` probe, a run by hand) it only
runs SCRIPT.
"""
import json
import os
import sys


def inherited_descriptors():
    """{fd: target} of the open descriptors above stderr (what exec'ing SCRIPT would pass on)."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the descriptor listdir itself used, closed by now
        if int(fd) > 2 and not target.startswith("/proc/"):
            found[fd] = target
    return found


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: audited_job.py SCRIPT.py [ARGS...]\n")
        return 2
    name, audit = os.environ.get("ATTUNE_JOB_NAME"), os.environ.get("ATTUNE_CRASHTEST_AUDIT")
    if name and audit and os.environ.get("RANK", "0") == "0":
        line = json.dumps({"job": name, "pid": os.getpid(), "inherited": inherited_descriptors()})
        fd = os.open(audit, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
    os.execv(sys.executable, [sys.executable, sys.argv[1], *sys.argv[2:]])


if __name__ == "__main__":
    sys.exit(main())
