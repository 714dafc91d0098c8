"""A scripted Tavily ``POST /search`` server on 127.0.0.1, for web search tests over real HTTP.

::

    with FakeTavilyServer() as srv:
        srv.enqueue(TavilyStep.results({"title": "A", "url": "https://a", "content": "..."}))
        provider = TavilyProvider("tvly-test", base_url=srv.base_url)
        ...
        assert srv.recorded[0].body["query"] == "..."
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.loopback import LoopbackServer


@dataclass(frozen=True)
class TavilyStep:
    """One reply: status, raw body, extra headers, and a delay before answering."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def results(cls, *items: object, query: str = "q", delay: float = 0.0) -> TavilyStep:
        """A successful reply in Tavily's shape (items are result objects, or junk to test)."""
        data = {"query": query, "answer": None, "results": list(items), "response_time": 0.4}
        return cls(200, json.dumps(data).encode(), delay=delay)

    @classmethod
    def error(cls, status: int, message: str, **headers: str) -> TavilyStep:
        """An error in Tavily's shape: ``{"detail": {"error": ...}}``."""
        body = json.dumps({"detail": {"error": message}}).encode()
        return cls(status, body, {k.replace("_", "-"): v for k, v in headers.items()})


@dataclass(frozen=True)
class TavilyRequest:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]


class FakeTavilyServer(LoopbackServer):
    """Answers each request with the next queued step (404 once the queue is empty)."""

    thread_name = "fake-tavily"

    def __init__(self, steps: Iterable[TavilyStep] = ()) -> None:
        self._steps: deque[TavilyStep] = deque(steps)
        self._lock = threading.Lock()
        self.recorded: list[TavilyRequest] = []
        self._http = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._http.fake = self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def enqueue(self, *steps: TavilyStep) -> None:
        with self._lock:
            self._steps.extend(steps)

    def _take(self, request: TavilyRequest) -> TavilyStep:
        with self._lock:
            self.recorded.append(request)
            if self._steps:
                return self._steps.popleft()
        return TavilyStep.error(404, "no scripted reply left")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeTavilyServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (the timeout tests) is expected, not a server bug.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        headers = {name.lower(): value for name, value in self.headers.items()}
        step = self.server.fake._take(TavilyRequest(self.path, headers, body))
        time.sleep(step.delay)
        self.send_response(step.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(step.body)))
        for name, value in step.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(step.body)
