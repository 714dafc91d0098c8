"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests over real HTTP.

In-process::

    with FakeOpenAIServer() as srv:
        srv.enqueue(FakeReply("Hello!"), FakeError(429, retry_after="1"))
        model = OpenAICompatModel(srv.model_settings())
        ...
        assert srv.requests[0]["messages"][-1]["content"] == "hi"

As a separate process (prints the base URL on its first stdout line)::

    python -m tests.support.fake_openai --port 0 --script steps.json --record requests.jsonl

A script file is a JSON list of steps: ``{"text", "reasoning", "tool_calls": [{"name",
"arguments", "id"}], "usage": [prompt, completion], "finish_reason", "delay", "break_after"}``
or ``{"error": {"status", "message", "type", "retry_after"}}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from shiyi.config.settings import ModelSettings
from tests.support.loopback import LoopbackServer
from tests.support.openai_wire import (
    FakeError,
    FakeReply,
    FakeStep,
    FakeToolCall,
    completion_json,
    load_script,
    step_from_json,
    stream_events,
)

__all__ = [
    "FakeError",
    "FakeOpenAIServer",
    "FakeReply",
    "FakeStep",
    "FakeToolCall",
    "RecordedRequest",
    "completion_json",
    "fake_openai",
    "load_script",
    "step_from_json",
    "stream_events",
]


@dataclass(frozen=True)
class RecordedRequest:
    """One request; header names are lower-cased."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


# --- the server ------------------------------------------------------------------------


class FakeOpenAIServer(LoopbackServer):
    """Serves ``POST /v1/chat/completions`` from a queue of scripted steps in a thread."""

    thread_name = "fake-openai"

    def __init__(
        self,
        steps: Iterable[FakeStep] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        record_to: Path | None = None,
    ) -> None:
        self._steps: deque[FakeStep] = deque(steps)
        self._lock = threading.Lock()
        self._record_to = record_to
        self.recorded: list[RecordedRequest] = []
        self._http = _HTTPServer((host, port), _Handler)
        self._http.fake = self

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def base_url(self) -> str:
        host = str(self._http.server_address[0])
        return f"http://{host}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Bodies of every chat request received, in order."""
        with self._lock:
            return [r.body for r in self.recorded]

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps)

    def enqueue(self, *steps: FakeStep) -> None:
        with self._lock:
            self._steps.extend(steps)

    def model_settings(self, **overrides: Any) -> ModelSettings:
        """Settings for an ``openai_compat`` model pointing here, with instant retries."""
        values: dict[str, Any] = {
            "provider": "openai_compat",
            "base_url": self.base_url,
            "api_key": SecretStr("sk-fake"),
            "model": "fake-model",
            "timeout": 10.0,
            "max_retries": 2,
            "retry_base_delay": 0.0,
            "retry_max_delay": 0.0,
        }
        values.update(overrides)
        return ModelSettings(**values)

    # Called from handler threads.
    def _take(self, request: RecordedRequest) -> tuple[FakeStep | None, int]:
        with self._lock:
            self.recorded.append(request)
            number = len(self.recorded)
            step = self._steps.popleft() if self._steps else None
        if self._record_to is not None:
            with self._record_to.open("a", encoding="utf-8") as out:
                out.write(json.dumps(request.body, ensure_ascii=False) + "\n")
        return step, number


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up (timeout tests, early stops) is expected, not a server bug.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked SSE, like real servers
    server: _HTTPServer
    timeout = 30  # idle keep-alive connections must not pin handler threads forever

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "fake-model"}]})
        else:
            self._send_json(404, _error_body("not found", "invalid_request_error"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, _error_body(f"no route {self.path}", "invalid_request_error"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, _error_body(f"invalid JSON: {exc}", "invalid_request_error"))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = RecordedRequest(self.path, headers, body)
        step, number = self.server.fake._take(request)
        model = str(body.get("model", "fake-model"))
        if step is None:
            # 400, not 5xx: the client must not retry a test script that ran dry.
            message = f"fake OpenAI server: no scripted response left for request {number}"
            self._send_json(400, _error_body(message, "fake_script_exhausted"))
        elif isinstance(step, FakeError):
            self._send_error(step)
        elif body.get("stream") or (isinstance(step, FakeReply) and step.empty):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = stream_events(step, model=model, reply_no=number, include_usage=include_usage)
            self._send_stream(events, step)
        else:
            self._send_json(200, completion_json(step, model=model, reply_no=number))

    def _send_error(self, error: FakeError) -> None:
        headers = dict(error.headers)
        if error.retry_after is not None:
            headers["Retry-After"] = error.retry_after
        self._send_json(error.status, _error_body(error.message, error.type), headers)

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, events: list[dict[str, Any]], reply: FakeReply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for _ in range(reply.pings):
            time.sleep(reply.delay)
            self._write_chunk(b": ping\n\n")
        if reply.empty:
            self.wfile.write(b"0\r\n\r\n")
            return
        for sent, event in enumerate(events):
            if reply.break_after is not None and sent >= reply.break_after:
                # Closing inside a chunked body is an unambiguous network failure.
                self.close_connection = True
                return
            if reply.delay and not reply.pings:
                time.sleep(reply.delay)
            self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
        if reply.done:
            self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A running fake server; enqueue steps, point a model at ``base_url``."""
    with FakeOpenAIServer() as server:
        yield server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted fake OpenAI-compatible server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--script", type=Path, help="JSON list of steps")
    parser.add_argument("--record", type=Path, help="append each request body here (JSONL)")
    args = parser.parse_args(argv)
    steps = load_script(args.script) if args.script else []
    server = FakeOpenAIServer(steps, host=args.host, port=args.port, record_to=args.record)
    print(server.base_url, flush=True)
    try:
        server._http.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._http.server_close()


if __name__ == "__main__":
    main()
