"""What the scripted model servers share (fake_model_server.py: Anthropic Messages,
responses_server.py: OpenAI Responses, gemini_server.py: Gemini API): the scenario and its turns,
the request log, the scripted choice of a legal move, the HTTP plumbing and the command line.
Python 3 standard library only; each server adds its own wire format."""

import argparse
import http.server
import json
import os
import threading
import time


class ScriptState:
    """The scenario ({"turns": [REPLY, ...], "default": REPLY}), the request log and the limits."""

    def __init__(self, args, scenario):
        self.args = args
        self.turns = list(scenario.get("turns", []))
        self.default = scenario.get("default", {"text": "done."})
        self.lock = threading.Lock()
        self.requests = 0
        self.model_calls = 0
        self.started = time.monotonic()
        self.stopping = threading.Event()

    def next_reply(self):
        """The next scripted REPLY (the default once the turns are used up). A REPLY with
        "repeat": true is not used up, so that every retry of a failed request fails too."""
        with self.lock:
            i = self.model_calls
            reply = self.turns[i] if i < len(self.turns) else self.default
            if not reply.get("repeat"):
                self.model_calls += 1
            return reply

    def log(self, entry):
        """Appends one request to --log as a JSON line with its number "n"; returns the count."""
        with self.lock:
            self.requests += 1
            entry["n"] = self.requests
            with open(self.args.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
            return self.requests


def pick_move(prompt_text):
    """A proposal for the legal move numbered by the prompt's proposal index, read from the
    "- lever ID: [changes]" lines of attune's prompt; done when none is listed."""
    moves = []
    index = 1
    for line in prompt_text.splitlines():
        if "proposal #" in line:
            moves = []  # a resumed session carries earlier prompts: only the last one counts
            try:
                index = int(line.split("proposal #", 1)[1].split(".")[0].split()[0])
            except ValueError:
                pass
        if line.startswith("- lever ") and ": [" in line:
            lever, rest = line[len("- lever "):].split(": ", 1)
            try:
                changes = json.JSONDecoder().raw_decode(rest)[0]
            except ValueError:
                continue
            moves.append({"changes": changes, "lever_id": lever,
                          "rationale": "scripted: legal move %d" % (len(moves) + 1)})
    if not moves:
        return {"done": True, "rationale": "scripted: no legal move listed"}
    return moves[(index - 1) % len(moves)]


class ScriptedHandler(http.server.BaseHTTPRequestHandler):
    """Quiet (the request log is the record), with JSON answers and interruptible sleeps."""

    def log_message(self, fmt, *args):
        pass

    @property
    def state(self):
        return self.server.state

    def _json(self, code, obj, headers=()):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sleep(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.state.stopping.is_set():
            time.sleep(0.05)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def arg_parser(description, max_body):
    """The command line every scripted server takes (a server may add its own options)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--scenario", required=True)
    p.add_argument("--log", required=True, help="NDJSON request log (appended)")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--port-file", help="written with the port once listening")
    p.add_argument("--max-requests", type=int, default=200)
    p.add_argument("--lifetime", type=float, default=300.0, help="seconds before it stops itself")
    p.add_argument("--max-body", type=int, default=max_body)
    return p


def serve(args, handler, state_class=ScriptState):
    """Listens on 127.0.0.1, writes the port to --port-file, serves until --lifetime is over."""
    with open(args.scenario, encoding="utf-8") as f:
        scenario = json.load(f)
    server = Server(("127.0.0.1", args.port), handler)
    server.state = state_class(args, scenario)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(str(server.server_address[1]))
        os.replace(tmp, args.port_file)

    def watchdog():
        while not server.state.stopping.is_set():
            if time.monotonic() - server.state.started > args.lifetime:
                server.state.stopping.set()
            time.sleep(0.1)
        server.shutdown()

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever(poll_interval=0.1)
    server.server_close()
    return 0
