#!/usr/bin/env python3
"""Self-test of the kill -9 suite's real-process checks (realprocs.py): each check must flag the
fault it exists for — a lost exit, a job still running after its recorded end, a dead wrapper, an
orphan process, an engine record that disagrees with the wrapper's — and stay quiet otherwise.
Uses real processes (sleep) and real record files; no engine needed.

  /usr/bin/python3 tools/crashtest/test_realprocs.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realprocs  # noqa: E402


def start_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return int(text[text.rfind(")") + 2:].split()[19])


class RealProcessChecks(unittest.TestCase):
    def setUp(self):
        self.campaign = tempfile.mkdtemp(prefix="crashtest-selftest-")
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        shutil.rmtree(self.campaign, ignore_errors=True)

    def sleeper(self, **kwargs):
        p = subprocess.Popen(["sleep", "60"], **kwargs)
        self.procs.append(p)
        time.sleep(0.05)
        return p

    def dead_pid(self):
        p = subprocess.Popen(["true"])
        p.wait()
        return p.pid

    def record(self, name, start=None, end=None):
        d = os.path.join(self.campaign, "launcher-local", "jobs", name)
        os.makedirs(d)
        with open(os.path.join(d, "submit.json"), "w") as f:
            json.dump({"name": name}, f)
        for file, value in (("start.json", start), ("end.json", end)):
            if value is not None:
                with open(os.path.join(d, file), "w") as f:
                    json.dump(value, f)
        return d

    def fake_wrapper(self, record):
        """A live process whose command line names `record`, as `attune local job-exec --record` does."""
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "--record", record])
        self.procs.append(p)
        time.sleep(0.05)
        return p

    def write_start(self, record, start):
        with open(os.path.join(record, "start.json"), "w") as f:
            json.dump(start, f)

    def test_a_job_running_under_a_live_wrapper_is_counted_and_not_flagged(self):
        record = self.record("j1")
        wrapper = self.fake_wrapper(record)
        self.write_start(record, {"wrapper_pid": wrapper.pid, "job_pid": wrapper.pid,
                                  "job_start_ticks": start_ticks(wrapper.pid)})
        problems, running = realprocs.check_records_after_kill(self.campaign)
        self.assertEqual(problems, [])
        self.assertEqual(running, 1)

    def test_a_live_process_that_is_not_the_wrappers_does_not_hide_a_lost_exit(self):
        record = self.record("j1")
        other = self.fake_wrapper(os.path.join(self.campaign, "another-record"))
        self.write_start(record, {"wrapper_pid": other.pid, "job_pid": 0})
        problems, running = realprocs.check_records_after_kill(self.campaign)
        self.assertEqual(running, 0)
        self.assertEqual(len(problems), 1)
        self.assertIn("recorded no end", problems[0])

    def test_a_dead_wrapper_without_an_end_record_is_a_lost_exit(self):
        self.record("j1", start={"wrapper_pid": self.dead_pid(), "job_pid": 0})
        problems, running = realprocs.check_records_after_kill(self.campaign)
        self.assertEqual(running, 0)
        self.assertEqual(len(problems), 1)
        self.assertIn("recorded no end", problems[0])

    def test_a_job_still_running_after_its_recorded_end_is_flagged(self):
        job = self.sleeper()
        self.record("j1", start={"wrapper_pid": self.dead_pid(), "job_pid": job.pid,
                                 "job_start_ticks": start_ticks(job.pid)},
                    end={"state": "succeeded", "start_time": 1.0, "end_time": 2.0})
        problems, _ = realprocs.check_records_after_kill(self.campaign)
        self.assertEqual(len(problems), 1)
        self.assertIn("is still running", problems[0])

    def test_a_reused_pid_is_not_taken_for_the_job(self):
        other = self.sleeper()
        self.record("j1", start={"wrapper_pid": self.dead_pid(), "job_pid": other.pid,
                                 "job_start_ticks": start_ticks(other.pid) + 1},
                    end={"state": "failed", "start_time": 1.0, "end_time": 2.0})
        problems, _ = realprocs.check_records_after_kill(self.campaign)
        self.assertEqual(problems, [])

    def test_a_node_failure_record_means_a_wrapper_died(self):
        self.record("j1", start={"wrapper_pid": self.dead_pid(), "job_pid": self.dead_pid()},
                    end={"state": "node_failure", "reason": "wrapper disappeared"})
        problems, _ = realprocs.check_records_after_kill(self.campaign)
        self.assertEqual(len(problems), 1)
        self.assertIn("node_failure", problems[0])

    def test_a_process_working_in_the_campaign_is_an_orphan(self):
        p = self.sleeper(cwd=self.campaign)
        found = realprocs.orphans(self.campaign)
        self.assertEqual(len(found), 1)
        self.assertIn(f"pid {p.pid}", found[0])

    def test_a_process_writing_a_file_in_the_campaign_is_an_orphan(self):
        with open(os.path.join(self.campaign, "job.log"), "w") as log:
            p = self.sleeper(stdout=log)
        found = realprocs.orphans(self.campaign)
        self.assertEqual(len(found), 1)
        self.assertIn("job.log", found[0])
        p.kill()
        p.wait()
        self.assertEqual(realprocs.wait_for_no_orphans(self.campaign, grace_s=0.5), [])

    def test_a_process_naming_the_campaign_on_its_command_line_is_an_orphan(self):
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                              os.path.join(self.campaign, "x")])
        self.procs.append(p)
        time.sleep(0.05)
        self.assertTrue(any(f"pid {p.pid}" in o for o in realprocs.orphans(self.campaign)))

    def test_no_process_no_orphan(self):
        self.assertEqual(realprocs.orphans(self.campaign), [])

    def test_an_engine_record_that_disagrees_with_the_wrapper_is_flagged(self):
        self.record("j1", start={"wrapper_pid": 0},
                    end={"state": "succeeded", "start_time": 10.0, "end_time": 20.0})
        agree = {"j1": {"status": {"state": "succeeded", "start_time": 10.0, "end_time": 20.0}}}
        self.assertEqual(realprocs.check_finished_against_records(self.campaign, agree), [])
        differ = {"j1": {"status": {"state": "failed", "start_time": 10.0, "end_time": 25.0}}}
        problems = realprocs.check_finished_against_records(self.campaign, differ)
        self.assertEqual(len(problems), 2)
        self.assertTrue(any("end_time" in p for p in problems))
        self.assertTrue(any("state" in p for p in problems))


if __name__ == "__main__":
    unittest.main()
