"""Checks for launchers that run real processes (the local launcher): job records and orphans.

The local launcher keeps one record directory per job, <campaign>/<launcher dir>/jobs/<name>/,
in which the job wrapper (`attune local job-exec`, plugins/launchers/local/job_wrapper.h) writes
  start.json  right after it forked the job: wrapper_pid, job_pid, pgid, job_start_ticks, start_time
  end.json    once the job's leader has exited: state, exit_code, signal, start_time, end_time
and holds wrapper.lock for its whole life. A killed engine does not take its wrappers down (they
run in their own session), so after every kill each started job must be either still running
(its wrapper alive) or finished with end.json written; a job that recorded its end must not still
be running. When a campaign has finished, no process may be left whose command line, working
directory or open files refer to the campaign directory: that would be a job (or a wrapper)
nobody will ever collect.

Everything here reads /proc and the record files only; nothing is signalled or locked.
"""
import glob
import json
import os
import time


def _read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        return {"_unreadable": str(e)}


def _stat_fields(pid):
    """(state, start_ticks) of a process from /proc/<pid>/stat, or None when there is none."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()
    if len(fields) < 20:
        return None
    return fields[0], int(fields[19])  # field 3 (state) and field 22 (start time in ticks)


def process_alive(pid, start_ticks=None):
    """True when `pid` is a live process (a zombie has exited) that, when `start_ticks` is given,
    started at that tick (so a reused pid does not count)."""
    if not pid or pid <= 1:
        return False
    st = _stat_fields(pid)
    if st is None or st[0] in ("Z", "X"):
        return False
    return not start_ticks or st[1] == start_ticks


def wrapper_alive(pid, record):
    """True when `pid` is a live job wrapper for `record` (its command line names the record, so a
    reused pid does not count)."""
    if not process_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return record.encode() in argv or os.path.realpath(record).encode() in argv


def job_records(campaign):
    """{job name: record dir} for every job a real-process launcher recorded in the campaign."""
    records = {}
    for submit in glob.glob(os.path.join(campaign, "*", "jobs", "*", "submit.json")):
        record = os.path.dirname(submit)
        records[os.path.basename(record)] = record
    return records


def check_records_after_kill(campaign):
    """(problems, running): what is wrong with the job records right after the engine was killed
    (a list of strings) and how many started jobs were still running under their wrappers."""
    problems, running = [], 0
    for name, record in sorted(job_records(campaign).items()):
        start = _read_json(os.path.join(record, "start.json"))
        if start is None:
            continue  # never started (or the wrapper is still starting): nothing can be lost
        end = _read_json(os.path.join(record, "end.json"))
        if end is None and not wrapper_alive(start.get("wrapper_pid"), record):
            end = _read_json(os.path.join(record, "end.json"))  # it may have just finished
            if end is None:
                problems.append(f"job {name}: its wrapper (pid {start.get('wrapper_pid')}) is gone "
                                f"but recorded no end (end.json): the job's exit is lost")
                continue
        if end is None:
            running += 1  # still running under its live wrapper
            continue
        if "_unreadable" in end or "_unreadable" in start:
            problems.append(f"job {name}: unreadable record: {end.get('_unreadable') or start.get('_unreadable')}")
            continue
        if end.get("state") == "node_failure":
            problems.append(f"job {name}: recorded as node_failure ({end.get('reason')}); only the "
                            f"engine was killed, so no wrapper should have died")
        if process_alive(start.get("job_pid"), start.get("job_start_ticks")):
            problems.append(f"job {name}: end.json says {end.get('state')} but its process "
                            f"{start.get('job_pid')} is still running")
    return problems, running


def _refers_to(pid, root):
    """What of process `pid` refers to a path under `root` (its command line, cwd, an open file)."""
    prefix = root.rstrip("/") + "/"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        if any(a == root or prefix in a or a.startswith(prefix) for a in argv):
            return "command line: " + " ".join(argv)[:300]
        cwd = os.readlink(f"/proc/{pid}/cwd")
        if cwd == root or cwd.startswith(prefix):
            return f"cwd {cwd}; command line: " + " ".join(argv)[:200]
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith(prefix):
                return f"open file {target}; command line: " + " ".join(argv)[:200]
    except OSError:
        return None  # gone, or not ours to read
    return None


def orphans(campaign):
    """Descriptions of live processes that still refer to the campaign directory."""
    root = os.path.realpath(campaign)
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me or not process_alive(int(entry)):
            continue
        what = _refers_to(int(entry), root)
        if what:
            found.append(f"pid {entry}: {what}")
    return found


def wait_for_no_orphans(campaign, grace_s=3.0):
    """Orphans still there after `grace_s` (a wrapper exits a few ms after it wrote end.json)."""
    deadline = time.monotonic() + grace_s
    while True:
        found = orphans(campaign)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.1)


def check_finished_against_records(campaign, finished):
    """Problems where a JobFinished event disagrees with the wrapper's end record: the engine must
    record what the job really did (`finished`: the JobFinished data, by job name)."""
    problems = []
    for name, record in sorted(job_records(campaign).items()):
        end = _read_json(os.path.join(record, "end.json"))
        data = finished.get(name)
        if end is None or data is None or "_unreadable" in end:
            continue
        st = data.get("status", {})
        for key in ("start_time", "end_time"):
            if end.get(key) is not None and st.get(key) is not None and abs(end[key] - st[key]) > 1e-3:
                problems.append(f"job {name}: JobFinished {key} {st[key]} but the wrapper "
                                f"recorded {end[key]}")
        if end.get("state") and st.get("state") and end["state"] != st["state"]:
            problems.append(f"job {name}: JobFinished state {st['state']} but the wrapper recorded "
                            f"{end['state']}")
    return problems
