#!/usr/bin/python3
"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code CLI in tests.

Python 3 standard library only. Binds to 127.0.0.1; stops after --max-requests requests or
--lifetime seconds; refuses bodies over --max-body bytes.

Speaks what Claude Code 2.1.x sends (see agent-clis.md section 4): answers HEAD / with 200, and
POST <prefix>/v1/messages[?beta=true] with a streamed (SSE) reply, or a plain Message JSON when
the request has "stream": false. `role: "system"` entries inside `messages` are accepted as is.

Every request is appended to --log as one JSON line {"n", "method", "path", "headers", "body"} so a
test can assert what the model saw (tool results, hook feedback, prompts).

Scenario (--scenario FILE, JSON):
  {"turns": [REPLY, ...], "default": REPLY}
Each POST to /v1/messages takes the next REPLY; when the list is used up, "default" (or a plain
"done." text) answers. A REPLY is an object with any of:
  "text": "..."                 a text block
  "proposal": {...}             a text block ending with the object in a ```json fence
  "bash": "command"             a Bash tool_use block (after the text, if any)
  "tool": {"name", "input"}     any tool_use block
  "sleep": seconds              wait before answering (the client may give up first)
  "http_error": 500, "message": "..."   an API error response instead of a message
  "usage": {"input_tokens": n, "output_tokens": m}
  "pick_move": "nth"            a proposal built from the prompt: the legal move number N (mod the
                                count) of "proposal #N", read from the "- lever ID: [changes]" lines
                                the claude-code plugin writes; "done" when none is listed
Usage: fake_model_server.py --scenario S.json --log requests.jsonl --port-file port.txt
"""

import json
import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scripted_http  # noqa: E402


def sse(event, data):
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode()


def request_text(body):
    """All text of the request's user messages, in order."""
    parts = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(b.get("text", "") for b in content if isinstance(b, dict))
    return "\n".join(parts)


def pick_move(body):
    """A proposal for the legal move numbered by the prompt's proposal index."""
    return scripted_http.pick_move(request_text(body))


def content_blocks(reply, body=None):
    """The content blocks of a scripted reply, in order."""
    blocks = []
    if reply.get("pick_move"):
        reply = dict(reply, proposal=pick_move(body or {}))
    text = reply.get("text")
    if "proposal" in reply:
        prefix = (text + "\n\n") if text else ""
        text = prefix + "```json\n" + json.dumps(reply["proposal"]) + "\n```"
    if text is not None:
        blocks.append({"type": "text", "text": text})
    if "bash" in reply:
        blocks.append({"type": "tool_use", "name": "Bash",
                       "input": {"command": reply["bash"], "description": "scripted command"}})
    if "tool" in reply:
        blocks.append({"type": "tool_use", "name": reply["tool"]["name"],
                       "input": reply["tool"].get("input", {})})
    if not blocks:
        blocks.append({"type": "text", "text": "done."})
    for b in blocks:
        if b["type"] == "tool_use":
            b["id"] = "toolu_" + uuid.uuid4().hex[:24]
    return blocks


def stop_reason(blocks):
    return "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"


def stream_events(model, blocks, usage):
    msg_id = "msg_" + uuid.uuid4().hex[:24]
    yield sse("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": usage.get("input_tokens", 100), "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
    yield sse("ping", {"type": "ping"})
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            yield sse("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "text", "text": ""}})
            yield sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "text_delta", "text": b["text"]}})
        else:
            yield sse("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "tool_use", "id": b["id"],
                                                                "name": b["name"], "input": {}}})
            yield sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta",
                                                        "partial_json": json.dumps(b["input"])}})
        yield sse("content_block_stop", {"type": "content_block_stop", "index": i})
    yield sse("message_delta", {"type": "message_delta",
                                "delta": {"stop_reason": stop_reason(blocks), "stop_sequence": None},
                                "usage": {"output_tokens": usage.get("output_tokens", 20)}})
    yield sse("message_stop", {"type": "message_stop"})


class Handler(scripted_http.ScriptedHandler):
    server_version = "fake-model/1"

    def _count_and_check(self):
        if self.state.requests >= self.state.args.max_requests:
            self.state.stopping.set()
            self.send_error(503, "fake model: request limit reached")
            return False
        return True

    def do_HEAD(self):
        self.state.log({"method": "HEAD", "path": self.path, "headers": {}, "body": None})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        self.state.log({"method": "GET", "path": self.path, "headers": {}, "body": None})
        self._json(200, {"ok": True})

    def do_POST(self):
        if not self._count_and_check():
            return
        length = int(self.headers.get("content-length", "0"))
        if length > self.state.args.max_body:
            self.state.log({"method": "POST", "path": self.path, "headers": {}, "body": "<too large>"})
            self._json(413, {"type": "error", "error": {"type": "request_too_large",
                                                        "message": "fake model: body too large"}})
            return
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()
                   if k.lower() in ("anthropic-beta", "user-agent", "x-claude-code-session-id")}
        self.state.log({"method": "POST", "path": self.path, "headers": headers, "body": body})
        path = self.path.split("?")[0]
        if path.endswith("/v1/messages/count_tokens"):
            self._json(200, {"input_tokens": 100})
        elif path.endswith("/v1/messages"):
            self._messages(body if isinstance(body, dict) else {})
        else:
            self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                        "message": "fake model: no such path"}})

    def _json(self, code, obj, headers=()):
        super()._json(code, obj, (("request-id", "req_fake"),) + tuple(headers))

    def _messages(self, body):
        reply = self.state.next_reply()
        if reply.get("sleep"):
            self._sleep(float(reply["sleep"]))
        if reply.get("http_error"):
            self._json(int(reply["http_error"]), {"type": "error", "error": {
                "type": "api_error", "message": reply.get("message", "scripted failure")}})
            return
        blocks = content_blocks(reply, body)
        model = body.get("model", "fake-model")
        usage = reply.get("usage", {})
        if not body.get("stream", False):
            self._json(200, {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message",
                             "role": "assistant", "model": model, "content": blocks,
                             "stop_reason": stop_reason(blocks), "stop_sequence": None,
                             "usage": {"input_tokens": usage.get("input_tokens", 100),
                                       "output_tokens": usage.get("output_tokens", 20)}})
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_fake")
        self.end_headers()
        try:
            for chunk in stream_events(model, blocks, usage):
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def parse_args(argv):
    p = scripted_http.arg_parser("Scripted fake Anthropic Messages API server", 8 << 20)
    return p.parse_args(argv)


def main(argv):
    return scripted_http.serve(parse_args(argv), Handler)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
