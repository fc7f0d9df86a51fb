#!/usr/bin/python3
"""A scripted stand-in for the Gemini API (generativelanguage v1beta), for driving the real Gemini
CLI (@google/gemini-cli 0.61) in tests through GOOGLE_GEMINI_BASE_URL.

Python 3 standard library only. Binds to 127.0.0.1; stops answering after --max-requests requests
and exits after --lifetime seconds; refuses bodies over --max-body bytes.

Speaks what the CLI sends:
  POST <prefix>/v1beta/models/<model>:streamGenerateContent?alt=sse  the agent's turns (SSE of
       GenerateContentResponse chunks); each takes the next scripted REPLY
  POST <prefix>/v1beta/models/<model>:generateContent  the same REPLY as one JSON response when the
       request asks for tools or plain text; a JSON-mode utility call (generationConfig
       .responseMimeType application/json: the CLI's own checks, e.g. "who speaks next") gets
       --utility-json instead and does not take a REPLY
  POST <prefix>/v1beta/models/<model>:countTokens  {"totalTokens": 100}
  GET  <prefix>/v1beta/models[...]  a one-model list
Anything else is logged and answered 404.

Every request is appended to --log as one JSON line {"n", "method", "path", "body"} so a test can
assert what the model saw (function responses, hook feedback, prompts).

Scenario (--scenario FILE, JSON):  {"turns": [REPLY, ...], "default": REPLY}
A REPLY is an object with any of:
  "text": "..."                  a text part
  "proposal": {...}              a text part ending with the object in a ```json fence
  "shell": "command"             a run_shell_command functionCall (after the text, if any)
  "call": {"name", "args"}       any functionCall
  "sleep": seconds               wait before answering (the client may give up first)
  "http_error": 500, "message"   an API error instead of a response (does not use up the REPLY
                                 when "repeat": true, so every retry fails too)
  "usage": {"prompt": n, "candidates": m}
  "pick_move": "nth"             a proposal for legal move N (mod the count) of "proposal #N", read
                                 from the "- lever ID: [changes]" lines of the agentkit prompt;
                                 "done" when none is listed
Usage: gemini_server.py --scenario S.json --log requests.jsonl --port-file port.txt
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scripted_http  # noqa: E402


def request_text(body):
    """All text of the request's contents, in order."""
    parts = []
    for c in body.get("contents", []):
        for p in c.get("parts", []) if isinstance(c, dict) else []:
            if isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
    return "\n".join(parts)


def pick_move(body):
    """A proposal for the legal move numbered by the prompt's proposal index."""
    return scripted_http.pick_move(request_text(body))


def parts_of(reply, body):
    """The content parts of a scripted reply, in order."""
    if reply.get("pick_move"):
        reply = dict(reply, proposal=pick_move(body))
    parts = []
    text = reply.get("text")
    if "proposal" in reply:
        prefix = (text + "\n\n") if text else ""
        text = prefix + "```json\n" + json.dumps(reply["proposal"]) + "\n```"
    if text is not None:
        parts.append({"text": text})
    if "shell" in reply:
        parts.append({"functionCall": {"name": "run_shell_command",
                                       "args": {"command": reply["shell"],
                                                "description": "scripted command"}}})
    if "call" in reply:
        parts.append({"functionCall": {"name": reply["call"]["name"],
                                       "args": reply["call"].get("args", {})}})
    if not parts:
        parts.append({"text": "done."})
    return parts


def response(parts, usage, model):
    prompt = usage.get("prompt", 100)
    candidates = usage.get("candidates", 20)
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": candidates,
                              "totalTokenCount": prompt + candidates},
            "modelVersion": model}


def model_of(path):
    name = path.split("?")[0].rsplit("/", 1)[-1]
    return name.split(":")[0]


def is_utility_call(body):
    config = body.get("generationConfig") or {}
    return config.get("responseMimeType") == "application/json"


class Handler(scripted_http.ScriptedHandler):
    server_version = "fake-gemini/1"

    def do_GET(self):
        self.state.log({"method": "GET", "path": self.path, "body": None})
        if "/models" in self.path:
            self._json(200, {"models": [{"name": "models/fake-model", "displayName": "fake",
                                         "supportedGenerationMethods": ["generateContent"]}]})
        else:
            self._json(404, {"error": {"code": 404, "message": "fake gemini: no such path",
                                       "status": "NOT_FOUND"}})

    def do_POST(self):
        if self.state.requests >= self.state.args.max_requests:
            self.state.stopping.set()
            self._error(503, "fake gemini: request limit reached")
            return
        length = int(self.headers.get("content-length", "0"))
        if length > self.state.args.max_body:
            self.state.log({"method": "POST", "path": self.path, "body": "<too large>"})
            self._error(413, "fake gemini: body too large")
            return
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.state.log({"method": "POST", "path": self.path, "body": body})
        body = body if isinstance(body, dict) else {}
        path = self.path.split("?")[0]
        if path.endswith(":countTokens"):
            self._json(200, {"totalTokens": 100})
        elif path.endswith(":streamGenerateContent"):
            self._generate(body, stream=True)
        elif path.endswith(":generateContent"):
            if is_utility_call(body):
                self._json(200, response([{"text": self.state.args.utility_json}], {}, "fake"))
            else:
                self._generate(body, stream=False)
        else:
            self._error(404, "fake gemini: no such path")

    def _error(self, code, message):
        status = {500: "INTERNAL", 503: "UNAVAILABLE", 429: "RESOURCE_EXHAUSTED"}
        self._json(code, {"error": {"code": code, "message": message,
                                    "status": status.get(code, "UNKNOWN")}})

    def _generate(self, body, stream):
        reply = self.state.next_reply()
        if reply.get("sleep"):
            self._sleep(float(reply["sleep"]))
        if reply.get("http_error"):
            self._error(int(reply["http_error"]), reply.get("message", "scripted failure"))
            return
        answer = response(parts_of(reply, body), reply.get("usage", {}), model_of(self.path))
        if not stream:
            self._json(200, answer)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        try:
            self.wfile.write(("data: " + json.dumps(answer) + "\r\n\r\n").encode())
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def parse_args(argv):
    p = scripted_http.arg_parser("Scripted fake Gemini API server", 16 << 20)
    p.add_argument("--utility-json", default='{"next_speaker": "user", "reasoning": "scripted"}',
                   help="the text of every JSON-mode generateContent answer")
    return p.parse_args(argv)


def main(argv):
    return scripted_http.serve(parse_args(argv), Handler)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
