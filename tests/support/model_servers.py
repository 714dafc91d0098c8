"""Loopback HTTP servers standing in for model servers and model hubs in tests.

:class:`RouteServer` answers GET paths with fixed JSON (an Ollama ``/api/tags``, an
OpenAI-style ``/v1/models``, a redirect), :class:`SilentPort` accepts connections and never
answers, and :class:`FileServer` serves files the way a hub does: HTTP Range, an optional
Hugging Face style redirect carrying ``X-Linked-ETag``, and injected faults (a connection
dropped midway).
"""

from __future__ import annotations

import json
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from tests.support.loopback import LoopbackServer


@dataclass(frozen=True)
class Route:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


def ollama_tags(*names: str, family: str = "qwen2") -> dict[str, Any]:
    """An Ollama ``/api/tags`` answer listing ``names``."""
    return {
        "models": [{"name": n, "model": n, "size": 1, "details": {"family": family}} for n in names]
    }


def openai_models(*ids: str, owned_by: str = "organization_owner") -> dict[str, Any]:
    """An OpenAI-style ``/v1/models`` answer listing ``ids``."""
    data = [{"id": i, "object": "model", "owned_by": owned_by} for i in ids]
    return {"object": "list", "data": data}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: Any


class RouteServer(LoopbackServer):
    """Answers each GET path in ``routes`` (others: 404) and records the paths asked."""

    thread_name = "route-server"

    def __init__(self, routes: dict[str, Route], *, host: str = "127.0.0.1") -> None:
        self.routes = routes
        self.asked: list[str] = []
        self._http = _Server((host, 0), _RouteHandler)
        self._http.owner = self

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])


class _RouteHandler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        owner: RouteServer = self.server.owner
        owner.asked.append(self.path)
        route = owner.routes.get(self.path, Route(404, {"error": "not found"}))
        data = json.dumps(route.body).encode() if route.body is not None else b""
        self.send_response(route.status)
        for name, value in route.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class SilentPort:
    """A port that accepts connections (the kernel's backlog) and never answers."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = int(self._sock.getsockname()[1])

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._sock.close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def non_loopback_address() -> str | None:
    """An IPv4 address of this machine that is not loopback, if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        except OSError:
            return None
        address = str(sock.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


# --- a hub -------------------------------------------------------------------------------


@dataclass
class Served:
    data: bytes
    linked_etag: str | None = None
    """Sent on a redirect from ``/<repo>/resolve/main/<file>`` to ``/cdn/<file>``, as the
    Hugging Face hub does for LFS files (their sha256)."""
    drop_after: int | None = None
    """The next response sends its headers and only this many body bytes, then hangs up."""
    drops: int = 1


class FileServer(LoopbackServer):
    """Serves ``files`` (URL path -> :class:`Served`) with Range support, recording each
    request's path and Range header."""

    thread_name = "file-server"

    def __init__(self, files: dict[str, Served]) -> None:
        self.files = files
        self.requests: list[tuple[str, str | None]] = []
        self._lock = threading.Lock()
        self._http = _Server(("127.0.0.1", 0), _FileHandler)
        self._http.owner = self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"


_RANGE = re.compile(r"bytes=(\d+)-$")


class _FileHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        owner: FileServer = self.server.owner
        with owner._lock:
            owner.requests.append((self.path, self.headers.get("Range")))
        if self.path.startswith("/cdn/"):
            name = self.path[len("/cdn/") :]
            hosted = (s for p, s in owner.files.items() if p.rsplit("/", 1)[-1] == name)
            return self._send_file(next(hosted, None))
        served = owner.files.get(self.path)
        if served is not None and served.linked_etag is not None:
            self.send_response(302)
            self.send_header("Location", "/cdn/" + self.path.rsplit("/", 1)[-1])
            self.send_header("X-Linked-ETag", f'"{served.linked_etag}"')
            self.send_header("X-Linked-Size", str(len(served.data)))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        return self._send_file(served)

    def _send_file(self, served: Served | None) -> None:
        if served is None:
            body = b"Entry not found"
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        start = 0
        match = _RANGE.match(self.headers.get("Range") or "")
        total = len(served.data)
        if match and int(match.group(1)) < total:
            start = int(match.group(1))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{total - 1}/{total}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(total - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        body = served.data[start:]
        if served.drop_after is not None and served.drops > 0:
            served.drops -= 1
            self.wfile.write(body[: served.drop_after])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)
