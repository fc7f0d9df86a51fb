#!/usr/bin/python3
"""A scripted stand-in for the OpenAI Responses API, for driving the real Codex CLI in tests.

Python 3 standard library only. Binds to 127.0.0.1; stops after --max-requests requests or
--lifetime seconds; refuses bodies over --max-body bytes.

Speaks what Codex CLI 0.171.0 sends through a `model_providers` entry with wire_api "responses":
POST <base_url>/responses with "stream": true, answered with server-sent events
  response.created, response.output_item.added, response.output_text.delta (assistant text),
  response.output_item.done, response.completed (with usage).
Tool calls are `function_call` output items (name, call_id, arguments as a JSON string); the
next request carries the tool's result as a `function_call_output` input item. Codex 0.171.0
offers its shell as the function `exec_command` with {"cmd": "..."}; when the request offers
`shell` ({"command": [argv]}) or `shell_command` ({"command": "..."}) instead, those are used.
Request bodies may be zstd- or gzip-encoded; gzip is decoded, zstd is logged as undecodable.

Every request is appended to --log as one JSON line {"n", "method", "path", "headers", "body"}.

Scenario (--scenario FILE, JSON):
  {"turns": [REPLY, ...], "default": REPLY}
Each POST takes the next REPLY; when the list is used up, "default" (or a plain "done." text)
answers. A REPLY is an object with any of:
  "text": "..."                  an assistant message
  "proposal": {...}              a message ending with the object in a ```json fence
  "shell": "command line"        a call of the CLI's shell tool (after the message, if any)
  "tool": {"name", "arguments"}  any function call (arguments: an object)
  "sleep": seconds               wait before answering (the client may give up first)
  "http_error": 500, "message": "..."   an error response instead of a stream
  "usage": {"input_tokens": n, "output_tokens": m}
  "pick_move": "nth"             a proposal built from the prompt: the legal move number N (mod the
                                 count) of "proposal #N", read from the "- lever ID: [changes]"
                                 lines of attune's prompt; "done" when none is listed
Usage: responses_server.py --scenario S.json --log requests.jsonl --port-file port.txt
"""

import gzip
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scripted_http  # noqa: E402


def new_id(prefix):
    return prefix + "_" + uuid.uuid4().hex[:24]


def user_text(body):
    """All input_text of the request's user messages, in order."""
    parts = []
    for item in body.get("input", []):
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(c.get("text", "") for c in content if isinstance(c, dict))
    return "\n".join(parts)


def pick_move(body):
    """A proposal for the legal move numbered by the prompt's proposal index."""
    return scripted_http.pick_move(user_text(body))


def shell_call(body, command):
    """A function_call of the shell tool the request offers, running `command`."""
    offered = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
    if "exec_command" in offered or not offered & {"shell", "shell_command"}:
        return "exec_command", {"cmd": command}
    if "shell_command" in offered:
        return "shell_command", {"command": command}
    return "shell", {"command": ["bash", "-lc", command]}


def output_items(reply, body):
    """The output items of a scripted reply, in order."""
    if reply.get("pick_move"):
        reply = dict(reply, proposal=pick_move(body))
    items = []
    text = reply.get("text")
    if "proposal" in reply:
        prefix = (text + "\n\n") if text else ""
        text = prefix + "```json\n" + json.dumps(reply["proposal"]) + "\n```"
    calls = []
    if "shell" in reply:
        calls.append(shell_call(body, reply["shell"]))
    if "tool" in reply:
        calls.append((reply["tool"]["name"], reply["tool"].get("arguments", {})))
    if text is None and not calls:
        text = "done."
    if text is not None:
        items.append({"type": "message", "id": new_id("msg"), "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": text, "annotations": []}]})
    for name, arguments in calls:
        items.append({"type": "function_call", "id": new_id("fc"), "call_id": new_id("call"),
                      "name": name, "arguments": json.dumps(arguments), "status": "completed"})
    return items


def sse(data):
    return ("event: %s\ndata: %s\n\n" % (data["type"], json.dumps(data))).encode()


def stream_events(model, items, usage):
    response_id = new_id("resp")
    base = {"id": response_id, "object": "response", "model": model, "created_at": int(time.time())}
    yield sse({"type": "response.created", "response": dict(base, status="in_progress", output=[])})
    for i, item in enumerate(items):
        if item["type"] == "message":
            yield sse({"type": "response.output_item.added", "output_index": i,
                       "item": dict(item, status="in_progress", content=[])})
            text = item["content"][0]["text"]
            yield sse({"type": "response.output_text.delta", "item_id": item["id"],
                       "output_index": i, "content_index": 0, "delta": text})
        else:
            yield sse({"type": "response.output_item.added", "output_index": i,
                       "item": dict(item, status="in_progress")})
        yield sse({"type": "response.output_item.done", "output_index": i, "item": item})
    input_tokens = usage.get("input_tokens", 100)
    output_tokens = usage.get("output_tokens", 20)
    yield sse({"type": "response.completed", "response": dict(
        base, status="completed", output=items,
        usage={"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
               "output_tokens": output_tokens,
               "output_tokens_details": {"reasoning_tokens": 0},
               "total_tokens": input_tokens + output_tokens})})


def decode_body(raw, encoding):
    if encoding == "gzip":
        raw = gzip.decompress(raw)
    elif encoding not in ("", "identity"):
        return "<%s-encoded body>" % encoding
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


class Handler(scripted_http.ScriptedHandler):
    server_version = "fake-responses/1"
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.state.log({"method": "GET", "path": self.path, "headers": {}, "body": None})
        self._json(404, {"error": {"message": "fake responses: no such path", "type": "not_found"}})

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        if self.state.requests >= self.state.args.max_requests:
            self.state.stopping.set()
            self._json(503, {"error": {"message": "fake responses: request limit reached"}})
            return
        if length > self.state.args.max_body:
            self.state.log({"method": "POST", "path": self.path, "headers": {}, "body": "<too large>"})
            self._json(413, {"error": {"message": "fake responses: body too large"}})
            return
        body = decode_body(self.rfile.read(length), self.headers.get("content-encoding", ""))
        headers = {k.lower(): v for k, v in self.headers.items()
                   if k.lower() in ("user-agent", "session-id", "originator", "authorization")}
        self.state.log({"method": "POST", "path": self.path, "headers": headers, "body": body})
        if self.path.split("?")[0].endswith("/responses"):
            self._responses(body if isinstance(body, dict) else {})
        else:
            self._json(404, {"error": {"message": "fake responses: no such path", "type": "not_found"}})

    def _responses(self, body):
        reply = self.state.next_reply()
        if reply.get("sleep"):
            self._sleep(float(reply["sleep"]))
        if reply.get("http_error"):
            self._json(int(reply["http_error"]), {"error": {
                "type": "server_error", "code": "server_error",
                "message": reply.get("message", "scripted failure")}})
            return
        items = output_items(reply, body)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for chunk in stream_events(body.get("model", "fake-model"), items,
                                       reply.get("usage", {})):
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def parse_args(argv):
    p = scripted_http.arg_parser("Scripted fake OpenAI Responses API server", 16 << 20)
    return p.parse_args(argv)


def main(argv):
    return scripted_http.serve(parse_args(argv), Handler)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
