#!/usr/bin/env python3
"""Full disk and read-only file system: runs a campaign in a small tmpfs that is already (almost)
full, at every free-space level from nothing up to what the whole campaign needs, and checks that

  1. the engine stops with a clear error (exit 1, a message naming the full disk and saying what to
     do), never with a signal or a RocksDB assertion, or finishes when the space sufficed;
  2. nothing acknowledged is lost: `attune verify` passes (or finds no log at all when nothing was
     ever acknowledged), and the log holds every acknowledged event;
  3. once space is freed, the same `attune run` resumes and finishes with the same leader,
     RESULTS.md and REPORT.md as an uninterrupted run, no job started twice, nothing forgotten,
     and the budget charged equal to the jobs' device time (the kill -9 suite's checks).

The sweep disables the log's free-space guard (ATTUNE_LOG_MIN_FREE_BYTES=0) so that the writes
really fail inside RocksDB, the watermark, the lock file, the reports and the launcher; two more
cases check the guard itself (default 8 MiB: a clear refusal before RocksDB sees the write) and a
read-only remount of a half-run campaign.

Mounting a tmpfs needs root, or unprivileged user namespaces (then the script re-runs itself under
`unshare --user --map-root-user --mount`). Without either it exits 77 (ctest: skipped).

Usage:
  diskfull.py --attune build/bin/attune --workflow tests/fixtures/crash/sim-small.yaml
              [--step-kib 4] [--workdir DIR] [--json]
Exit 0 when every check held; 1 when a violation was found (each is printed); 2 on bad usage.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crashtest  # noqa: E402  (the kill -9 suite's checks)

SKIP = 77
TMPFS_MIB = 16
DISK_WORDS = ("No space left on device", "disk full", "is full")
FORBIDDEN = ("Assertion", "Aborted", "terminate called", "Segmentation")


def mount_tmpfs(path, mib):
    os.makedirs(path, exist_ok=True)
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mib}m", "tmpfs", path],
                         capture_output=True, text=True)
    return out.returncode == 0, out.stderr.strip()


def umount(path):
    subprocess.run(["umount", "-l", path], capture_output=True)


def remount(path, mode):
    out = subprocess.run(["mount", "-o", f"remount,{mode}", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"diskfull: cannot remount {path} {mode}: {out.stderr.strip()}")


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill_leaving(mount, leave):
    """Creates mount/filler so that `leave` bytes stay free (tmpfs counts whole pages)."""
    filler = os.path.join(mount, "filler")
    size = free_bytes(mount) - leave
    if size > 0:
        fd = os.open(filler, os.O_CREAT | os.O_WRONLY, 0o600)
        try:
            os.posix_fallocate(fd, 0, size)
        finally:
            os.close(fd)
    return filler


def du_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except FileNotFoundError:
                pass
    return total


class DiskFull:
    def __init__(self, args):
        self.args = args
        self.suite = crashtest.Suite(argparse.Namespace(
            attune=args.attune, workflow=[args.workflow], kills=0, seed=1, workdir=None,
            json=args.json, verbose=args.verbose, nondeterministic=False, cwd=args.cwd,
            reserve_charges=False))
        self.levels = 0
        self.stopped = 0      # levels where the engine stopped for lack of space
        self.finished = 0     # levels where the space sufficed
        self.messages = {}    # first line of each distinct error, for the report

    def violation(self, where, what):
        self.suite.violation(where, what)

    def run_engine(self, campaign, ack, env_extra=None, crash_at=None):
        saved = dict(self.suite.env)
        self.suite.env.update(env_extra or {})
        try:
            return self.suite.run_engine(self.args.workflow, campaign, ack, crash_at=crash_at)
        finally:
            self.suite.env = saved

    def check_stop(self, where, rc, err, expect_words):
        if rc < 0 or rc > 128:
            self.violation(where, f"engine died of a signal (exit {rc}): {err.strip()[-400:]}")
            return False
        if any(w in err for w in FORBIDDEN):
            self.violation(where, f"engine printed a crash: {err.strip()[-400:]}")
        if rc == 0:
            return True
        if rc != 1:
            self.violation(where, f"engine exited {rc}, expected 1 for a resource error: {err.strip()[-300:]}")
        if not any(w in err for w in expect_words):
            self.violation(where, f"the error does not say what is wrong ({expect_words}): {err.strip()[-400:]}")
        last = err.strip().splitlines()[-1] if err.strip() else ""
        key = last.split(":")[0:2]
        self.messages.setdefault(":".join(key), last[:300])
        return True

    def job_names(self, campaign):
        events, _ = self.suite.events(campaign)
        return sorted(e["data"].get("job") for e in events or [] if e.get("type") == "JobRequested")

    def final(self, where, campaign, reference):
        """The kill -9 suite's final checks, with the set of jobs taken from the log: a launcher
        that started a job but could not append its audit line (the disk filled in between)
        leaves a gap in its audit trail that says nothing about double submission."""
        self.suite.deterministic = False
        self.suite.check_final(where, campaign, reference)
        self.suite.deterministic = True
        names, ref_names = self.job_names(campaign), self.job_names(reference)
        if names != ref_names:
            self.violation(where, f"jobs differ from the uninterrupted run: "
                                  f"{sorted(set(names) ^ set(ref_names)) or 'repeated names'}")
        for name in ("RESULTS.md", "REPORT.md"):
            if self.suite.read_report(campaign, name) != self.suite.read_report(reference, name):
                self.violation(where, f"{name} differs from the uninterrupted run")
        status, _ = self.suite.attune_json("status", campaign)
        if (status or {}).get("leader") != self.suite.reference_status.get("leader"):
            self.violation(where, f"leader {(status or {}).get('leader')} != uninterrupted "
                                  f"{self.suite.reference_status.get('leader')}")

    def reference(self, root):
        campaign = os.path.join(root, "reference", "campaign")
        # A reference left by an earlier run (of another build) would be resumed as finished and
        # compared as if this build had produced it.
        shutil.rmtree(os.path.join(root, "reference"), ignore_errors=True)
        for stale in ("reference.ack",):
            if os.path.exists(os.path.join(root, stale)):
                os.remove(os.path.join(root, stale))
        rc, seconds, err = self.run_engine(campaign, os.path.join(root, "reference.ack"))
        if rc != 0:
            raise SystemExit(f"diskfull: the uninterrupted run failed (exit {rc}): {err}")
        self.suite.reference_status, _ = self.suite.attune_json("status", campaign)
        if (self.suite.reference_status or {}).get("launcher") not in crashtest.DETERMINISTIC_LAUNCHERS:
            raise SystemExit("diskfull: the workflow must use a deterministic launcher (sim)")
        return campaign, du_bytes(campaign)

    def one_level(self, mount, leave, reference, env_extra, expect_words, where):
        """Runs with `leave` bytes free, checks the stop, frees the space, resumes, checks all."""
        shutil.rmtree(os.path.join(mount, "c"), ignore_errors=True)
        for name in ("filler", "ack"):
            if os.path.exists(os.path.join(mount, name)):
                os.remove(os.path.join(mount, name))
        # The same --campaign-id as the reference (crashtest's run_engine), so that job names and
        # reports compare equal.
        campaign = os.path.join(mount, "c", "campaign")
        ack = os.path.join(self.args.workdir, "level.ack")
        if os.path.exists(ack):
            os.remove(ack)
        filler = fill_leaving(mount, leave)
        rc, _, err = self.run_engine(campaign, ack, env_extra)
        self.levels += 1
        ok = self.check_stop(where, rc, err, expect_words)
        if rc == 0:
            self.finished += 1
        else:
            self.stopped += 1
        if os.path.exists(filler):
            os.remove(filler)
        self.suite.check_acknowledged(where, campaign, ack)
        if not ok:
            return rc
        if rc != 0:
            rc2, _, err2 = self.run_engine(campaign, ack, env_extra)
            if rc2 != 0:
                self.violation(where, f"resume after freeing space exited {rc2}: {err2.strip()[-400:]}")
                return rc
            self.suite.check_acknowledged(f"{where} resumed", campaign, ack)
        self.final(where, campaign, reference)
        return rc

    def read_only(self, mount, reference):
        where = "read-only"
        shutil.rmtree(os.path.join(mount, "c"), ignore_errors=True)
        campaign = os.path.join(mount, "c", "campaign")
        ack = os.path.join(self.args.workdir, "ro.ack")
        if os.path.exists(ack):
            os.remove(ack)
        # Stop half-way (a crash point) so that there is a campaign to resume.
        rc, _, _ = self.run_engine(campaign, ack, crash_at="job.ended:3")
        if rc not in (-signal.SIGKILL, 128 + signal.SIGKILL):
            self.violation(where, f"the half-way stop did not happen (exit {rc})")
            return
        remount(mount, "ro")
        try:
            rc, _, err = self.run_engine(campaign, ack)
            self.check_stop(where, rc, err, ("Read-only file system",))
            if rc == 0:
                self.violation(where, "the engine reported success on a read-only file system")
            if "remount it read-write" not in err:
                self.violation(where, f"the error does not say what to do: {err.strip()[-300:]}")
            verify = subprocess.run([self.args.attune, "verify", campaign], capture_output=True,
                                    text=True)
            if verify.returncode != 0:
                self.violation(where, f"attune verify on the read-only log failed: "
                                      f"{verify.stdout.strip()} {verify.stderr.strip()}")
            status = subprocess.run([self.args.attune, "status", campaign], capture_output=True,
                                    text=True)
            if status.returncode != 0:
                self.violation(where, f"attune status on the read-only log failed: {status.stderr.strip()}")
        finally:
            remount(mount, "rw")
        self.suite.check_acknowledged(where, campaign, ack)
        rc, _, err = self.run_engine(campaign, ack)
        if rc != 0:
            self.violation(where, f"resume after remounting read-write exited {rc}: {err.strip()[-400:]}")
            return
        self.final(where, campaign, reference)

    def run(self):
        started = time.monotonic()
        mount = os.path.join(self.args.workdir, "mnt")
        ok, why = mount_tmpfs(mount, TMPFS_MIB)
        if not ok:
            print(f"diskfull: skipped: cannot mount a tmpfs at {mount} ({why})")
            return SKIP
        try:
            reference, needed = self.reference(self.args.workdir)
            step = self.args.step_kib * 1024
            top = needed + 64 * 1024
            guard_off = {"ATTUNE_LOG_MIN_FREE_BYTES": "0"}
            for leave in range(0, top + 1, step):
                self.one_level(mount, leave, reference, guard_off, DISK_WORDS,
                               f"{leave >> 10} KiB free")
            # The guard: with 4 MiB free (under the default 8 MiB) the first append is refused
            # before RocksDB sees it, with the guard's own message.
            self.one_level(mount, 4 << 20, reference, {"ATTUNE_LOG_MIN_FREE_BYTES": ""},
                           ("attune keeps at least 8192 KiB free",), "guard, 4 MiB free")
            self.read_only(mount, reference)
        finally:
            umount(mount)
        summary = {"levels": self.levels, "stopped_for_space": self.stopped,
                   "finished": self.finished, "campaign_bytes": needed,
                   "violations": len(self.suite.violations),
                   "seconds": round(time.monotonic() - started, 1), "messages": self.messages}
        if self.args.json:
            print(json.dumps(summary))
        else:
            print(f"diskfull: {self.levels} free-space levels (0..{top >> 10} KiB by "
                  f"{self.args.step_kib} KiB; the campaign needs {needed >> 10} KiB): "
                  f"{self.stopped} stopped cleanly for lack of space and resumed, {self.finished} "
                  f"finished; guard and read-only cases; {len(self.suite.violations)} violations, "
                  f"{summary['seconds']} s")
            for key, line in sorted(self.messages.items()):
                print(f"  e.g. {line}")
        return 0 if not self.suite.violations else 1


def reexec_in_user_namespace():
    """Not root: try again inside a user + mount namespace where we may mount a tmpfs."""
    if os.environ.get("ATTUNE_DISKFULL_UNSHARED") or shutil.which("unshare") is None:
        return None
    env = dict(os.environ, ATTUNE_DISKFULL_UNSHARED="1")
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        return None
    return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", sys.executable,
                           *sys.argv], env=env).returncode


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--attune", required=True, help="the attune binary")
    p.add_argument("--workflow", required=True, help="a workflow on a deterministic launcher (sim)")
    p.add_argument("--step-kib", type=int, default=4, help="free-space step of the sweep")
    p.add_argument("--workdir", help="scratch directory (default: a new temp dir)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--cwd", default=crashtest.REPO_ROOT, help="the engine's working directory")
    args = p.parse_args()
    args.attune = os.path.abspath(args.attune)
    args.workflow = os.path.abspath(args.workflow)
    if not os.access(args.attune, os.X_OK):
        print(f"diskfull: {args.attune} is not an executable attune binary", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        rc = reexec_in_user_namespace()
        if rc is None:
            print("diskfull: skipped: mounting a tmpfs needs root or unprivileged user namespaces")
            return SKIP
        return rc
    args.workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="attune-diskfull-"))
    os.makedirs(args.workdir, exist_ok=True)
    return DiskFull(args).run()


if __name__ == "__main__":
    sys.exit(main())
