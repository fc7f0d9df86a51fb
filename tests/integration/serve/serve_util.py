"""Shared by the `attune serve` tests: make sim campaigns, start and stop the server, HTTP calls."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time

FAILURES = []


def check(cond, what):
    print(('  ok: ' if cond else '  FAIL: ') + what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


class Env:
    def __init__(self, attune, plugins, source):
        self.attune, self.source = attune, source
        self.env = dict(os.environ, ATTUNE_PLUGIN_PATH=plugins, ATTUNE_DATA_DIR=source)

    def run(self, *args, timeout=120, extra_env=None):
        env = dict(self.env, **(extra_env or {}))
        return subprocess.run([self.attune, *args], env=env, capture_output=True, text=True, timeout=timeout)

    def campaign(self, directory, workflow='tests/fixtures/crash/sim-small.yaml', extra_env=None):
        p = self.run('run', os.path.join(self.source, workflow), '--dir', directory, extra_env=extra_env)
        return p

    def status(self, directory):
        p = self.run('status', directory, '--json')
        return json.loads(p.stdout)

    def event_count(self, directory):
        p = self.run('events', directory, '--json')
        return len([line for line in p.stdout.splitlines() if line.strip()])


class Server:
    """`attune serve` on a free port; the address is read from its first line."""

    def __init__(self, env, *args):
        self.proc = subprocess.Popen([env.attune, 'serve', *args, '--port', '0'], env=env.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r'http://([^/]+)/(\?token=(\w+))?', line)
        if not m:
            self.proc.kill()
            raise RuntimeError('attune serve printed no address: ' + line + self.proc.stderr.read())
        self.address = m.group(1)
        self.token = m.group(3)
        self.host, port = self.address.rsplit(':', 1)
        self.port = int(port)
        self.url = 'http://' + self.address

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None

    def get(self, path, headers=None, method='GET', body=None, timeout=10):
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, dict(r.getheaders()), data

    def json(self, path, headers=None):
        status, _, data = self.get(path, headers)
        return status, json.loads(data) if data else None

    def raw(self, data, read=True):
        """Sends raw bytes; returns the status code of the answer (or None if the server closed)."""
        s = socket.create_connection((self.host, self.port), timeout=10)
        try:
            s.sendall(data)
            if not read:
                return s
            answer = b''
            while b'\r\n' not in answer:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
            m = re.match(rb'HTTP/1\.1 (\d+)', answer)
            return int(m.group(1)) if m else None
        finally:
            if read:
                s.close()


def open_stream(server, path, token=None):
    """Opens an event stream; returns (socket, first bytes read)."""
    s = socket.create_connection((server.host, server.port), timeout=10)
    auth = f'Authorization: Bearer {token}\r\n' if token else ''
    s.sendall(f'GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Accept: text/event-stream\r\n\r\n'.encode())
    data = b''
    deadline = time.time() + 10
    while b'\n\n' not in data.split(b'\r\n\r\n', 1)[-1] and time.time() < deadline:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return s, data


def read_until(sock, needle, timeout):
    data = b''
    deadline = time.time() + timeout
    sock.settimeout(0.2)
    while needle not in data and time.time() < deadline:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        data += chunk
    return data
