"""The KubeRay launcher's torchrun driver (plugins/launchers/kuberay/torchrun_on_ray.py), run for
real: with the stand-in `ray` package (tests/ray_double/, a test double: every "node" is this
machine) and the real torchrun of Debian's python3-torch (through tools/minigpt/bin/torchrun, the
shim that makes torch 1.13's torchrun start under Python 3.11). Two "nodes" x one process each
rendezvous on 127.0.0.1 and all-reduce with gloo.

    /usr/bin/python3 tests/integration/kuberay/torchrun_on_ray_test.py [-v]

Exit 77 (skipped) when torch is missing.
"""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
DRIVER = os.path.join(ROOT, 'plugins', 'launchers', 'kuberay', 'torchrun_on_ray.py')
PROBE = os.path.join(HERE, 'torchrun_probe.py')
SKIP = 77

sys.path.insert(0, os.path.dirname(DRIVER))
import torchrun_on_ray as tor  # noqa: E402


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose (its parent has not reaped it yet).
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().split(')')[-1].split()[0] != 'Z'
    except OSError:
        return False


class Driver:
    """The driver as a process, its output collected line by line."""

    def __init__(self, args, path_first=None, env=None):
        e = dict(os.environ)
        e['PYTHONPATH'] = os.path.join(ROOT, 'tests', 'ray_double')
        e['PATH'] = (path_first or os.path.join(ROOT, 'tools', 'minigpt', 'bin')) + ':' + e['PATH']
        e.update(env or {})
        self.proc = subprocess.Popen([sys.executable, DRIVER] + args, env=e, cwd=ROOT,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out, self.err = [], []
        self.threads = [threading.Thread(target=self._read, args=(s, buf), daemon=True)
                        for s, buf in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self.threads:
            t.start()

    def _read(self, stream, buf):
        for line in stream:
            buf.append(line.rstrip('\n'))

    def wait(self, timeout=60):
        code = self.proc.wait(timeout)
        for t in self.threads:
            t.join(5)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code

    def wait_for(self, predicate, timeout=45):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return True
            if self.proc.poll() is not None:
                return predicate()
            time.sleep(0.1)
        return False

    def text(self):
        return '\n'.join(self.out) + '\n--- stderr ---\n' + '\n'.join(self.err)

    def ready_pids(self):
        """Worker pids from the probe's 'probe: ready pid=P node=N' lines, by node."""
        pids = {}
        for line in self.out:
            if 'probe: ready pid=' in line:
                words = line.split('probe: ready ')[1].split()
                pids[int(words[1].split('=')[1])] = int(words[0].split('=')[1])
        return pids

    def torchrun_pids(self):
        pids = set()
        for line in self.out + self.err:
            if line.startswith('(torchrun_node'):
                pids.add(int(line.split(' pid=')[1].split(',')[0]))
        return pids


def torchrun(*script_args):
    return ['--', 'torchrun', '--nproc-per-node', '1', '--nnodes', '2', '--master-addr', 'elsewhere',
            '--master-port=1', PROBE] + list(script_args)


class NodeCommandTest(unittest.TestCase):
    """The command each node runs: the recipe's, with the driver's rendezvous."""

    def test_rendezvous_flags_are_the_drivers_and_nproc_is_kept(self):
        recipe = ['torchrun', '--nproc-per-node', '8', '--nnodes=4', '--node_rank', '3',
                  '--master-addr', 'old', '--master_port', '6000', '--rdzv-backend', 'c10d',
                  '--rdzv_endpoint=x:1', '--rdzv-id', 'j', '--standalone', '--max-restarts', '0',
                  'pretrain_gpt.py', '--nnodes', 'script-arg-stays']
        cmd = tor.node_command(recipe, 2, 1, '10.0.0.5', 29500, 8)
        self.assertEqual(cmd, ['torchrun', '--nnodes', '2', '--node_rank', '1', '--master_addr',
                               '10.0.0.5', '--master_port', '29500', '--nproc-per-node', '8',
                               '--max-restarts', '0', 'pretrain_gpt.py', '--nnodes',
                               'script-arg-stays'])

    def test_python_m_torch_distributed_run(self):
        cmd = tor.node_command(['python3', '-m', 'torch.distributed.run', '--nproc_per_node=2',
                                'train.py'], 2, 0, 'h', 1, 2)
        self.assertEqual(cmd[:3], ['python3', '-m', 'torch.distributed.run'])
        self.assertIn('--nproc_per_node=2', cmd)
        self.assertEqual(cmd[-1], 'train.py')

    def test_a_missing_nproc_is_the_gpus_per_node(self):
        cmd = tor.node_command(['torchrun', 'train.py'], 2, 0, 'h', 1, 4)
        self.assertEqual(cmd[-3:], ['--nproc-per-node', '4', 'train.py'])

    def test_nproc_other_than_the_gpus_per_node_is_refused(self):
        with self.assertRaises(tor.UsageError) as e:
            tor.node_command(['torchrun', '--nproc-per-node', '8', 'train.py'], 2, 0, 'h', 1, 4)
        self.assertIn('--nproc-per-node 8', str(e.exception))
        self.assertIn('4 GPUs', str(e.exception))

    def test_what_is_not_torchrun_is_refused(self):
        with self.assertRaises(tor.UsageError):
            tor.node_command(['python3', 'train.py'], 2, 0, 'h', 1, 1)
        with self.assertRaises(tor.UsageError):
            tor.node_command(['torchrun', '--nproc-per-node', '1'], 2, 0, 'h', 1, 1)

    def test_the_driver_refuses_a_mismatch_before_starting_anything(self):
        d = Driver(['--nnodes', '2', '--gpus-per-node', '2', '--', 'torchrun', '--nproc-per-node',
                    '8', 'train.py'])
        self.assertEqual(d.wait(), tor.USAGE_ERROR, d.text())
        self.assertIn('--nproc-per-node 8', d.text())

    def test_a_cluster_without_the_nodes_times_out_with_a_message(self):
        d = Driver(['--nnodes', '3', '--gpus-per-node', '1', '--placement-timeout-s', '0.5'] +
                   torchrun(), env={'RAY_DOUBLE_NODES': '2'})
        self.assertEqual(d.wait(), tor.PLACEMENT_TIMEOUT, d.text())
        self.assertIn('no 3 nodes with 1 GPUs', d.text())


class FakeTorchrunTest(unittest.TestCase):
    """Exit codes without torch: a `torchrun` that exits 7 on node 1 while node 0 sleeps."""

    def test_the_first_failing_nodes_code_wins_and_the_others_are_stopped(self):
        with tempfile.TemporaryDirectory() as bin_dir:
            fake = os.path.join(bin_dir, 'torchrun')
            with open(fake, 'w') as f:
                f.write('#!/bin/sh\n'
                        'case "$*" in *"--node_rank 1 "*) echo "node1: boom" >&2; exit 7;; esac\n'
                        'echo "node0: sleeping pid=$$"; exec sleep 30\n')
            os.chmod(fake, 0o755)
            start = time.time()
            d = Driver(['--nnodes', '2', '--gpus-per-node', '1', '--', 'torchrun', 'train.py'],
                       path_first=bin_dir)
            self.assertEqual(d.wait(), 7, d.text())
            self.assertLess(time.time() - start, 20)
            self.assertIn('node 1 exited with code 7', d.text())
            self.assertIn('(torchrun_node1 ', [l for l in d.err if 'node1: boom' in l][-1])
            for pid in d.torchrun_pids():
                self.assertFalse(alive(pid), 'torchrun %d still runs' % pid)


    def fake(self, bin_dir, script):
        path = os.path.join(bin_dir, 'torchrun')
        with open(path, 'w') as f:
            f.write('#!/bin/sh\n' + script)
        os.chmod(path, 0o755)

    def test_a_failed_worker_report_ends_the_job_while_torchrun_waits_in_its_exit_barrier(self):
        with tempfile.TemporaryDirectory() as bin_dir:
            # torch.distributed.elastic's report, then the exit barrier (up to 5 minutes).
            self.fake(bin_dir, 'case "$*" in *"--node_rank 1 "*) echo "ERROR:torch.distributed.'
                      'elastic.multiprocessing.api:failed (exitcode: 3) local_rank: 0 (pid: 1) of '
                      'binary: x" >&2;; esac\nexec sleep 30\n')
            start = time.time()
            d = Driver(['--nnodes', '2', '--gpus-per-node', '1', '--', 'torchrun', 'train.py'],
                       path_first=bin_dir)
            self.assertEqual(d.wait(), tor.TORCHRUN_WORKER_FAILED, d.text())
            self.assertLess(time.time() - start, 20)
            self.assertIn('node 1: a worker failed with exit code 3', d.text())
            for pid in d.torchrun_pids():
                self.assertFalse(alive(pid), 'torchrun %d still runs' % pid)

    def test_a_torchrun_that_cannot_start_is_named(self):
        d = Driver(['--nnodes', '2', '--gpus-per-node', '1', '--', '/nonexistent/torchrun', 'x.py'])
        self.assertEqual(d.wait(), tor.CANNOT_START, d.text())
        self.assertIn('could not start torchrun', d.text())
        self.assertIn('/nonexistent/torchrun', d.text())

    def test_with_max_restarts_a_failed_worker_is_left_to_torchrun(self):
        with tempfile.TemporaryDirectory() as bin_dir:
            self.fake(bin_dir, 'echo "ERROR:torch.distributed.elastic.multiprocessing.api:failed '
                      '(exitcode: 3) local_rank: 0 (pid: 1) of binary: x" >&2; sleep 1; exit 0\n')
            d = Driver(['--nnodes', '2', '--gpus-per-node', '1', '--', 'torchrun',
                        '--max-restarts', '2', 'train.py'], path_first=bin_dir)
            self.assertEqual(d.wait(), 0, d.text())


@unittest.skipIf(subprocess.run(['/usr/bin/python3', '-c', 'import torch'],
                                capture_output=True).returncode != 0, 'no torch')
class RealTorchrunTest(unittest.TestCase):
    """Real torchrun, two nodes x one process, gloo on 127.0.0.1."""

    def test_both_nodes_join_one_world_and_their_output_reaches_the_driver(self):
        d = Driver(['--nnodes', '2', '--gpus-per-node', '1'] + torchrun())
        self.assertEqual(d.wait(90), 0, d.text())
        out = d.text()
        self.assertIn('(torchrun_node0 pid=', out)
        self.assertIn('probe: rank 0/2 node 0 sum 2', out)
        self.assertIn('probe: rank 1/2 node 1 sum 2', out)
        self.assertIn('all 2 nodes finished', out)
        self.assertNotIn('elsewhere', out)  # the recipe's --master-addr was replaced

    def test_a_failing_node_ends_the_job_with_its_code_and_stops_the_other(self):
        d = Driver(['--nnodes', '2', '--gpus-per-node', '1'] +
                   torchrun('--fail-node', '1', '--code', '3'))
        code = d.wait(90)
        text = d.text()
        self.assertEqual(code, 1, text)  # torchrun's own exit code when a worker fails
        self.assertIn('node 1: a worker failed with exit code 3', text)
        self.assertIn('node 1 exited with code 1', text)
        self.assertIn('fails on purpose', '\n'.join(d.err))
        survivors = [p for p in list(d.ready_pids().values()) + list(d.torchrun_pids()) if alive(p)]
        self.assertEqual(survivors, [], text)

    def test_sigterm_stops_every_torchrun_and_its_workers(self):
        d = Driver(['--nnodes', '2', '--gpus-per-node', '1'] + torchrun('--sleep', '120'))
        self.assertTrue(d.wait_for(lambda: len(d.ready_pids()) == 2), d.text())
        d.proc.send_signal(signal.SIGTERM)
        self.assertEqual(d.wait(30), 128 + signal.SIGTERM, d.text())
        self.assertIn('SIGTERM: stopping 2 torchrun(s)', d.text())
        pids = list(d.ready_pids().values()) + list(d.torchrun_pids())
        self.assertEqual(len(pids), 4)
        deadline = time.time() + 5
        while time.time() < deadline and any(alive(p) for p in pids):
            time.sleep(0.1)
        self.assertEqual([p for p in pids if alive(p)], [], d.text())


if __name__ == '__main__':
    unittest.main()
