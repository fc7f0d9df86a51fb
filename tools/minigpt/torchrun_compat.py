#!/usr/bin/python3
"""`torchrun` for Debian's torch 1.13 on Python 3.11, which cannot start workers as shipped.

torch 1.13's `Std.from_str("0")` looks the value up by iterating an IntFlag, and Python 3.11 no
longer yields the zero member, so the default `--redirects 0 --tee 0` become None and torchrun dies
with "AttributeError: 'NoneType' object has no attribute 'get'". This shim fixes that lookup and
accepts the newer dashed spellings (`--nproc-per-node`, `--nnodes`, ...). torch 1.13's
`--standalone` always binds its rendezvous store to port 29400, so two local jobs at once (tests
run in parallel, a campaign with two jobs in flight) collide with "Address already in use"; the
shim turns `--standalone` into an explicit c10d rendezvous on a free port, as newer torch releases
do. Without `--log-dir`, torch 1.13 makes a `torchelastic_*` folder in the temp directory for every
run and never removes it (hundreds piled up under /tmp); the shim gives it a folder of its own and
removes that when torchrun returns or raises. Then it runs torch.distributed.run unchanged:

    /usr/bin/python3 tools/minigpt/torchrun_compat.py --standalone --nproc-per-node 2 \
        tools/minigpt/pretrain_gpt.py --micro-batch-size 1 ...
"""

import re
import shutil
import socket
import sys
import tempfile
import uuid

from torch.distributed.elastic.multiprocessing import api as mp_api
from torch.distributed.run import main as torchrun_main

_DASHED = {'--nproc-per-node': '--nproc_per_node', '--master-addr': '--master_addr',
           '--master-port': '--master_port', '--node-rank': '--node_rank',
           '--max-restarts': '--max_restarts', '--rdzv-backend': '--rdzv_backend',
           '--rdzv-endpoint': '--rdzv_endpoint', '--rdzv-id': '--rdzv_id',
           '--log-dir': '--log_dir', '--monitor-interval': '--monitor_interval',
           '--no-python': '--no_python', '--run-path': '--run_path'}


def _std_from_str(vm):
    if re.match(mp_api._VALUE_REGEX, vm):
        return mp_api.Std(int(vm))
    if re.match(mp_api._MAPPING_REGEX, vm):
        return {int(i): mp_api.Std(int(v)) for i, v in (m.split(':') for m in vm.split(','))}
    raise ValueError('{} does not match: <{}> or <{}>'.format(vm, mp_api._VALUE_REGEX,
                                                              mp_api._MAPPING_REGEX))


_SWITCHES = {'--standalone', '--no_python', '--no-python', '-m', '--module', '--run_path',
             '--run-path'}


def _translate(argv):
    """Renames dashed launcher options up to the training script (the first non-option word)."""
    out, i = [], 0
    while i < len(argv) and argv[i].startswith('-'):
        name, sep, value = argv[i].partition('=')
        out.append(_DASHED.get(name, name) + sep + value)
        if not sep and name not in _SWITCHES and i + 1 < len(argv):
            out.append(argv[i + 1])  # because every other torchrun option takes a value
            i += 1
        i += 1
    return out + argv[i:]


def _free_port():
    """A TCP port free at this moment on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _standalone_on_free_port(argv):
    """Replaces `--standalone` (fixed port 29400 in torch 1.13) by a rendezvous on a free port."""
    launcher = []
    i = 0
    while i < len(argv) and argv[i].startswith('-'):
        launcher.append(argv[i])
        i += 1
        if '=' not in launcher[-1] and launcher[-1] not in _SWITCHES and i < len(argv):
            launcher.append(argv[i])
            i += 1
    if '--standalone' not in launcher:
        return argv
    launcher.remove('--standalone')
    rdzv = ['--rdzv_backend', 'c10d', '--rdzv_endpoint', 'localhost:%d' % _free_port(),
            '--rdzv_id', str(uuid.uuid4())]
    if not any(a == '--nnodes' or a.startswith('--nnodes=') for a in launcher):
        rdzv += ['--nnodes', '1']
    return launcher + rdzv + argv[i:]


def _launcher_options(argv):
    """The launcher's own options: the words before the training script."""
    i = 0
    while i < len(argv) and argv[i].startswith('-'):
        i += 1
        if '=' not in argv[i - 1] and argv[i - 1] not in _SWITCHES and i < len(argv):
            i += 1
    return argv[:i]


def _with_own_log_dir(argv):
    """Adds `--log_dir` on a fresh temporary folder unless the caller gave one; (argv, folder)."""
    if any(a == '--log_dir' or a.startswith('--log_dir=') for a in _launcher_options(argv)):
        return argv, None
    folder = tempfile.mkdtemp(prefix='torchelastic_')
    return ['--log_dir', folder] + argv, folder


if __name__ == '__main__':
    mp_api.Std.from_str = classmethod(lambda cls, vm: _std_from_str(vm))
    ARGV, LOG_DIR = _with_own_log_dir(_standalone_on_free_port(_translate(sys.argv[1:])))
    try:
        sys.exit(torchrun_main(ARGV))
    finally:
        if LOG_DIR:
            shutil.rmtree(LOG_DIR, ignore_errors=True)
