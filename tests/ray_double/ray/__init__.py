"""A stand-in for Ray, for tests only: see tests/ray_double/README.md. Not Ray."""

import os
import queue
import threading
import time

from . import exceptions, util  # noqa: F401  (ray.exceptions, ray.util as Ray has them)
from .exceptions import GetTimeoutError, RayActorError

_initialized = False


def init(*_args, **_kwargs):
    global _initialized
    _initialized = True


def is_initialized():
    return _initialized


def nodes():
    gpus = float(os.environ.get('RAY_DOUBLE_GPUS_PER_NODE', '1'))
    cpus = float(os.environ.get('RAY_DOUBLE_CPUS_PER_NODE', '4'))
    count = int(os.environ.get('RAY_DOUBLE_NODES', '2'))
    return [{'NodeID': 'node%d' % i, 'NodeManagerAddress': '127.0.0.1', 'Alive': True,
             'Resources': {'CPU': cpus, 'GPU': gpus}} for i in range(count)]


class ObjectRef:
    """The result of a remote call, filled in by the actor's thread."""

    def __init__(self):
        self._done = threading.Event()
        self._value = None
        self._error = None

    def _set(self, value=None, error=None):
        self._value, self._error = value, error
        self._done.set()

    def _result(self):
        if self._error is not None:
            raise self._error
        return self._value


def get(refs, timeout=None):
    single = isinstance(refs, ObjectRef)
    items = [refs] if single else list(refs)
    deadline = None if timeout is None else time.time() + timeout
    for ref in items:
        left = None if deadline is None else max(0.0, deadline - time.time())
        if not ref._done.wait(left):
            raise GetTimeoutError('Get timed out: some object(s) not ready.')
    values = [ref._result() for ref in items]
    return values[0] if single else values


def wait(refs, num_returns=1, timeout=None):
    deadline = None if timeout is None else time.time() + timeout
    while True:
        done = [r for r in refs if r._done.is_set()]
        if len(done) >= num_returns or (deadline is not None and time.time() >= deadline):
            return done[:num_returns], [r for r in refs if r not in done[:num_returns]]
        time.sleep(0.01)


class _Method:
    def __init__(self, actor, name):
        self._actor, self._name = actor, name

    def remote(self, *args, **kwargs):
        return self._actor._call(self._name, args, kwargs)


class ActorHandle:
    """An actor: its instance lives in one thread that runs the calls in order."""

    def __init__(self, cls, args, kwargs):
        self._calls = queue.Queue()
        self._dead = False
        ready = ObjectRef()
        self._thread = threading.Thread(target=self._loop, args=(cls, args, kwargs, ready),
                                        daemon=True)
        self._thread.start()
        get(ready)

    def _loop(self, cls, args, kwargs, ready):
        try:
            instance = cls(*args, **kwargs)
        except Exception as e:  # because Ray reports a failed constructor on the first call
            ready._set(error=e)
            return
        ready._set()
        while True:
            item = self._calls.get()
            if item is None:
                return
            name, args, kwargs, ref = item
            try:
                ref._set(getattr(instance, name)(*args, **kwargs))
            except Exception as e:  # because Ray hands a method's exception to ray.get
                ref._set(error=e)

    def _call(self, name, args, kwargs):
        ref = ObjectRef()
        if self._dead:
            ref._set(error=RayActorError('The actor died: ray.kill() was called on it.'))
        else:
            self._calls.put((name, args, kwargs, ref))
        return ref

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)
        return _Method(self, name)


class ActorClass:
    def __init__(self, cls, options=None):
        self._cls = cls
        self._options = dict(options or {})

    def options(self, **options):
        return ActorClass(self._cls, dict(self._options, **options))

    def remote(self, *args, **kwargs):
        strategy = self._options.get('scheduling_strategy')
        if strategy is not None and not strategy.placement_group._placed:
            raise RuntimeError('ray stand-in: an actor asked for a placement group that is not ready')
        return ActorHandle(self._cls, args, kwargs)


def remote(target=None, **options):
    if target is None:
        return lambda t: remote(t, **options)
    if not isinstance(target, type):
        raise NotImplementedError('ray stand-in: only actors (classes) are implemented')
    return ActorClass(target, options)


def kill(actor, no_restart=True):
    actor._dead = True
    actor._calls.put(None)
