#!/usr/bin/env python3
"""Talks to a running k8s_double.py's control endpoints (tests use it; loopback TLS only).

  double_ctl.py STATE_DIR faults '[{"kind": "oom", "match": "job-*"}]'
  double_ctl.py STATE_DIR state        # prints {"rayjobs": [...], "pods": [...], "live_processes": [...]}
  double_ctl.py STATE_DIR stop         # SIGTERM to the double (it kills its jobs' processes)
"""
import json
import os
import signal
import ssl
import sys
import urllib.request


def call(state_dir, method, path, body=None):
    with open(os.path.join(state_dir, "port")) as f:
        port = int(f.read())
    context = ssl.create_default_context(cafile=os.path.join(state_dir, "server.crt"))
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"https://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=context, timeout=30) as resp:
        return json.loads(resp.read())


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    state_dir, verb = sys.argv[1], sys.argv[2]
    if verb == "faults":
        print(json.dumps(call(state_dir, "POST", "/_double/faults", json.loads(sys.argv[3]))))
    elif verb == "state":
        print(json.dumps(call(state_dir, "GET", "/_double/state")))
    elif verb == "stop":
        with open(os.path.join(state_dir, "double.pid")) as f:
            os.kill(int(f.read()), signal.SIGTERM)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
