"""Runs a torchrun recipe on the worker nodes of a Ray cluster: the KubeRay launcher's driver.

A RayJob runs its entrypoint once, on the head pod, but a multi-node torchrun recipe needs one
torchrun per node. This driver, run as the RayJob's entrypoint, reserves one bundle
{GPU: G, CPU: C} per node in a STRICT_SPREAD placement group (one bundle per worker node), starts
one actor in each bundle, and has each actor run

    torchrun --nnodes N --node_rank i --master_addr <node 0's IP> --master_port <port> ...

with the recipe's own torchrun options (minus the rendezvous ones, which are the driver's), its
script and its arguments. The actors inherit the Ray job's runtime environment (the recipe's
env_vars), and Ray sets CUDA_VISIBLE_DEVICES to the bundle's GPUs.

  * Output: every line a node prints reaches the driver's stdout (stderr lines its stderr), after
    a Ray-style tag "(torchrun_node<i> pid=<torchrun pid>, ip=<node IP>) " that attune's log
    normaliser removes before parsing, as it removes Ray's own actor tags.
  * Failure: when a node's torchrun exits non-zero, or reports a failed worker (its elastic
    agent's "failed (exitcode: N) local_rank: ..." line; torchrun then waits up to 5 minutes in
    its exit barrier for the other nodes, which are often stuck in a collective with the dead
    rank; ignored with --max-restarts > 0), the other nodes' torchruns are stopped, the failed
    node's torchrun gets --stop-grace-s to exit by itself (else it is stopped too) and the driver
    exits with its code (torchrun's 1 for a failed worker; a signal N gives 128+N; the first
    failure seen wins), after printing the tail of that node's stderr.
  * Stop: SIGTERM or SIGINT to the driver (`ray job stop`, a deleted RayJob) stops every torchrun
    (SIGTERM to its process group, SIGKILL after --stop-grace-s) and exits 128+signal. A torchrun
    also gets SIGTERM when its actor's process dies (PR_SET_PDEATHSIG), so a driver killed
    outright leaves nothing running once Ray reaps its actors.

Usage (the launcher renders this; the source travels base64-encoded in the entrypoint, so nothing
needs installing in the image beyond Ray and PyTorch):

    python3 torchrun_on_ray.py --nnodes 2 --gpus-per-node 8 -- \
        torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 ...

Exit status: the recipe's, 2 for a command it cannot run (a wrong --nproc-per-node), 3 when the
placement group is not ready in --placement-timeout-s, 127 when torchrun cannot be started.
"""

import argparse
import collections
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

# torchrun options that take a value (both spellings); any other option is a switch.
_VALUED = {
    'nproc_per_node', 'nnodes', 'node_rank', 'master_addr', 'master_port', 'rdzv_backend',
    'rdzv_endpoint', 'rdzv_id', 'rdzv_conf', 'max_restarts', 'monitor_interval', 'start_method',
    'role', 'log_dir', 'redirects', 'tee', 'local_addr', 'logs_specs', 'local_ranks_filter',
    'event_log_handler', 'r', 't'}
# Options the driver sets for every node; the recipe's are dropped.
_MANAGED = {'nnodes', 'node_rank', 'master_addr', 'master_port', 'rdzv_backend',
            'rdzv_endpoint', 'rdzv_id', 'rdzv_conf', 'standalone'}
_TORCHRUN_MODULES = ('torch.distributed.run', 'torch.distributed.launch')
USAGE_ERROR = 2
PLACEMENT_TIMEOUT = 3
CANNOT_START = 127  # as a shell says for a command it cannot find
STDERR_TAIL = 40
# torch.distributed.elastic's report of a worker that failed (torch 1.9 to 2.x).
_WORKER_FAILED = re.compile(r'failed \(exitcode: (-?\d+)\) local_rank: \d+')
TORCHRUN_WORKER_FAILED = 1  # torchrun's exit status when a worker failed (ChildFailedError)


class UsageError(Exception):
    """A command this driver cannot run as asked; the message says what to change."""


def _option_name(word):
    return word.lstrip('-').split('=', 1)[0].replace('-', '_')


def split_torchrun(argv):
    """(launcher words, [(name, words)] options, script and its arguments) of a torchrun command:
    `torchrun ...` or `python3 -m torch.distributed.run ...`."""
    if not argv:
        raise UsageError('no command to run')
    if os.path.basename(argv[0]) == 'torchrun':
        head = 1
    elif len(argv) > 2 and argv[1] == '-m' and argv[2] in _TORCHRUN_MODULES:
        head = 3
    else:
        raise UsageError("not a torchrun command: '%s' (expected torchrun or python3 -m "
                         "torch.distributed.run)" % ' '.join(argv[:3]))
    options, i = [], head
    while i < len(argv) and len(argv[i]) > 1 and argv[i].startswith('-') and argv[i] != '--':
        name = _option_name(argv[i])
        words = [argv[i]]
        if '=' not in argv[i] and name in _VALUED and i + 1 < len(argv):
            words.append(argv[i + 1])
        options.append((name, words))
        i += len(words)
    if i >= len(argv):
        raise UsageError('the torchrun command names no training script')
    return argv[:head], options, argv[i:]


def _value(words):
    return words[0].split('=', 1)[1] if '=' in words[0] else (words[1] if len(words) > 1 else '')


def node_command(argv, nnodes, node_rank, master_addr, master_port, gpus_per_node):
    """The torchrun command node `node_rank` runs: the recipe's, with the driver's rendezvous.
    Raises UsageError when --nproc-per-node is not the GPUs each node has."""
    launcher, options, script = split_torchrun(argv)
    kept = []
    nproc = None
    for name, words in options:
        if name == 'nproc_per_node':
            nproc = _value(words)
        if name not in _MANAGED:
            kept.extend(words)
    if nproc is None:
        kept += ['--nproc-per-node', str(gpus_per_node)]
    elif nproc != str(gpus_per_node):
        raise UsageError('the recipe runs --nproc-per-node %s processes per node, but each Ray '
                         'worker node has %d GPUs for it; make them equal (the KubeRay launcher\'s '
                         'gpus_per_worker, or the recipe\'s --nproc-per-node)'
                         % (nproc, gpus_per_node))
    rendezvous = ['--nnodes', str(nnodes), '--node_rank', str(node_rank),
                  '--master_addr', master_addr, '--master_port', str(master_port)]
    return launcher + rendezvous + kept + script


def max_restarts(argv):
    """The recipe's --max-restarts (0 when absent, as torchrun's default)."""
    _, options, _ = split_torchrun(argv)
    for name, words in options:
        if name == 'max_restarts':
            try:
                return int(_value(words))
            except ValueError:
                return 0
    return 0


def _die_with_parent():
    """In the child: SIGTERM when the thread that started it (the actor) goes away. Linux only."""
    try:
        import ctypes
        ctypes.CDLL('libc.so.6', use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # because the driver's own stop still ends the torchrun; this is only a backstop


class NodeRunner:
    """One node's torchrun, run as a Ray actor. Its methods return at once (Ray runs an actor's
    calls one at a time), except stop(), which waits up to its grace period."""

    def __init__(self, node_rank):
        self.node_rank = node_rank
        self.proc = None
        self.lines = collections.deque()
        self.stderr_tail = collections.deque(maxlen=STDERR_TAIL)
        self.lock = threading.Lock()
        self.readers = []
        self.ended_at = None
        self.worker_failed = None  # (when, the worker's exit code) from torchrun's report

    def address(self):
        """This node's IP and a TCP port free on it now (the rendezvous port when this is node 0)."""
        import ray
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(('', 0))
            port = s.getsockname()[1]
        return ray.util.get_node_ip_address(), port

    def start(self, command, cwd):
        """(torchrun's pid, None), or (None, why it could not start)."""
        if not os.path.isdir(cwd):
            cwd = None  # because the node's image may lack the driver's directory; Ray's is used
        try:
            self.proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         start_new_session=True, preexec_fn=_die_with_parent)
        except OSError as e:
            return None, '%s: %s' % (command[0], e)
        for stream, name in ((self.proc.stdout, 'out'), (self.proc.stderr, 'err')):
            t = threading.Thread(target=self._read, args=(stream, name), daemon=True)
            t.start()
            self.readers.append(t)
        return self.proc.pid, None

    def _read(self, stream, name):
        for raw in iter(stream.readline, b''):
            line = raw.decode('utf-8', 'replace').rstrip('\n')
            failed = _WORKER_FAILED.search(line)
            with self.lock:
                self.lines.append((name, line))
                if name == 'err':
                    self.stderr_tail.append(line)
                if failed and self.worker_failed is None:
                    self.worker_failed = (time.time(), int(failed.group(1)))

    def poll(self):
        """(new lines as (stream, text), exit code or None, when it failed or ended, and the
        failed worker's exit code or None)."""
        code = self.proc.poll() if self.proc else None
        if code is not None:
            for t in self.readers:
                t.join(timeout=5)
            if self.ended_at is None:
                self.ended_at = time.time()
        with self.lock:
            lines = list(self.lines)
            self.lines.clear()
            worker = self.worker_failed
        if worker is not None:
            return lines, code, worker[0], worker[1]
        return lines, code, self.ended_at, None

    def tail(self):
        with self.lock:
            return list(self.stderr_tail)

    def wait(self, timeout_s):
        """Its exit code once it exits within `timeout_s`, else None."""
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace_s):
        """SIGTERM to the torchrun's process group (torchrun and its workers), SIGKILL after
        `grace_s`. Returns its exit code."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                return self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                continue
        return self.proc.wait()


def _exit_code(code):
    return 128 - code if code < 0 else code


class Driver:
    def __init__(self, ray, args):
        self.ray = ray
        self.args = args
        self.actors = []
        self.tags = []
        self.stopping = None  # the signal that asked us to stop
        self.restarts = max_restarts(args.command)

    def say(self, text):
        print('torchrun_on_ray: ' + text, flush=True)

    def place(self):
        from ray.util.placement_group import placement_group
        a = self.args
        bundle = {'CPU': a.cpus_per_node}
        if a.gpus_per_node > 0:
            bundle['GPU'] = a.gpus_per_node
        self.pg = placement_group([dict(bundle) for _ in range(a.nnodes)], strategy='STRICT_SPREAD')
        self.say('waiting for %d nodes with %s each (placement group, STRICT_SPREAD)'
                 % (a.nnodes, bundle))
        deadline = time.time() + a.placement_timeout_s
        ready = self.pg.ready()
        while True:
            left = deadline - time.time()
            if left <= 0 or self.stopping:
                return False
            done, _ = self.ray.wait([ready], timeout=min(left, 1.0))
            if done:
                return True

    def start_actors(self):
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
        a = self.args
        runner = self.ray.remote(NodeRunner)
        for i in range(a.nnodes):
            strategy = PlacementGroupSchedulingStrategy(placement_group=self.pg,
                                                        placement_group_bundle_index=i)
            self.actors.append(runner.options(num_cpus=a.cpus_per_node, num_gpus=a.gpus_per_node,
                                              scheduling_strategy=strategy).remote(i))
        addresses = self.ray.get([actor.address.remote() for actor in self.actors])
        master_addr, master_port = addresses[0]
        self.say('rendezvous at %s:%d, %d nodes x %d processes'
                 % (master_addr, master_port, a.nnodes, a.gpus_per_node))
        cwd = os.getcwd()
        starts = []
        for i, actor in enumerate(self.actors):
            command = node_command(a.command, a.nnodes, i, master_addr, master_port,
                                   a.gpus_per_node)
            starts.append(actor.start.remote(command, cwd))
        started = self.ray.get(starts)
        self.tags = ['(torchrun_node%d pid=%s, ip=%s) ' % (i, pid, addresses[i][0])
                     for i, (pid, _) in enumerate(started)]
        errors = ['node %d: %s' % (i, why) for i, (_, why) in enumerate(started) if why]
        if errors:
            self.say('could not start torchrun (is it on PATH in the image?): ' + '; '.join(errors))
            self.stop([i for i, (pid, _) in enumerate(started) if pid])
            return False
        return True

    def emit(self, node, lines):
        for stream, text in lines:
            out = sys.stdout if stream == 'out' else sys.stderr
            out.write(self.tags[node] + text + '\n')
        sys.stdout.flush()
        sys.stderr.flush()

    def supervise(self):
        """Streams output until every node is done, a node fails or a signal comes; the exit code."""
        running = set(range(len(self.actors)))
        while running:
            polls = self.ray.get([self.actors[i].poll.remote() for i in sorted(running)])
            failed = []
            for i, (lines, code, when, worker_code) in zip(sorted(running), polls):
                self.emit(i, lines)
                if self.restarts > 0:
                    worker_code = None  # because torchrun restarts the workers itself
                if worker_code is not None or (code is not None and code != 0):
                    failed.append((when, i, code, worker_code))
                elif code == 0:
                    running.discard(i)
            if failed:
                _, node, code, worker_code = min(failed, key=lambda f: (f[0], f[1]))
                return self.fail(node, code, worker_code, running)
            if self.stopping:
                self.say('%s: stopping %d torchrun(s)' % (signal.Signals(self.stopping).name,
                                                          len(running)))
                self.stop(running)
                return 128 + self.stopping
            time.sleep(self.args.poll_interval_s)
        self.say('all %d nodes finished' % len(self.actors))
        return 0

    def fail(self, node, code, worker_code, running):
        others = sorted(running - {node})
        if code is None:
            self.say("node %d: a worker failed with exit code %d; stopping the other %d node(s)"
                     % (node, worker_code, len(others)))
        else:
            self.say('node %d exited with code %d; stopping the other %d node(s)'
                     % (node, _exit_code(code), len(others)))
        self.stop(others)
        if code is None:  # its torchrun waits in the exit barrier, which the stop above ends
            code = self.ray.get(self.actors[node].wait.remote(self.args.stop_grace_s))
            if code is None:
                self.stop([node])
            if not code or code < 0:  # stopped by us, or a torchrun that hid the failure
                code = TORCHRUN_WORKER_FAILED
            self.say('node %d exited with code %d' % (node, _exit_code(code)))
            self.emit(node, self.ray.get(self.actors[node].poll.remote())[0])
        tail = self.ray.get(self.actors[node].tail.remote())
        self.say('the last %d stderr lines of node %d:' % (len(tail), node))
        for line in tail:
            sys.stderr.write(self.tags[node] + line + '\n')
        sys.stderr.flush()
        return _exit_code(code)

    def stop(self, nodes):
        stops = [self.actors[i].stop.remote(self.args.stop_grace_s) for i in nodes]
        self.ray.get(stops)
        for i in nodes:  # what they printed while stopping
            self.emit(i, self.ray.get(self.actors[i].poll.remote())[0])

    def run(self):
        if not self.place():
            if self.stopping:
                return 128 + self.stopping
            self.say('the placement group was not ready after %gs: the Ray cluster has no %d nodes '
                     'with %d GPUs and %g CPUs free each (are the worker pods running and joined?)'
                     % (self.args.placement_timeout_s, self.args.nnodes, self.args.gpus_per_node,
                        self.args.cpus_per_node))
            return PLACEMENT_TIMEOUT
        if not self.start_actors():
            return CANNOT_START
        return self.supervise()

    def cleanup(self):
        from ray.util.placement_group import remove_placement_group
        for actor in self.actors:
            self.ray.kill(actor)
        if getattr(self, 'pg', None) is not None:
            remove_placement_group(self.pg)


def parse_args(argv):
    p = argparse.ArgumentParser(prog='torchrun_on_ray', description=__doc__.split('\n')[0])
    p.add_argument('--nnodes', type=int, required=True, help='worker nodes, one torchrun each')
    p.add_argument('--gpus-per-node', type=int, required=True,
                   help='GPUs each torchrun gets; must equal its --nproc-per-node')
    p.add_argument('--cpus-per-node', type=float, default=1,
                   help='CPUs reserved per bundle (the actor only supervises torchrun)')
    p.add_argument('--placement-timeout-s', type=float, default=900)
    p.add_argument('--stop-grace-s', type=float, default=2.0,
                   help='SIGTERM to SIGKILL (Ray kills the driver 3 s after its own SIGTERM)')
    p.add_argument('--poll-interval-s', type=float, default=0.2)
    p.add_argument('command', nargs=argparse.REMAINDER, help='-- torchrun ... script args')
    args = p.parse_args(argv)
    if args.command and args.command[0] == '--':
        args.command = args.command[1:]
    if args.nnodes < 1:
        p.error('--nnodes must be at least 1')
    return args


def main(argv):
    args = parse_args(argv)
    try:
        node_command(args.command, args.nnodes, 0, '127.0.0.1', 1, args.gpus_per_node)
    except UsageError as e:
        print('torchrun_on_ray: ' + str(e), file=sys.stderr, flush=True)
        return USAGE_ERROR
    import ray
    driver = Driver(ray, args)

    def on_signal(signum, _frame):
        driver.stopping = signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    ray.init()
    try:
        return driver.run()
    finally:
        driver.cleanup()


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
