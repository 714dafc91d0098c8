"""Who may talk to the server from a browser: the Host and Origin checks (pure ASGI).

A server on loopback with no token trusts whoever reaches it, and a web page the user visits
can reach it too, two ways:

- **DNS rebinding**: ``attacker.example`` first resolves to the attacker, serves a script,
  then resolves to 127.0.0.1; the script's requests now reach this server *as the same
  origin*, so they may read the answers. Only the ``Host`` header still says
  ``attacker.example``. So a loopback-bound server answers only loopback names (and the
  names in ``server.allowed_hosts``, for a proxy in front of it).
- **Cross-site requests**: any page may send a POST/DELETE here (a form, or ``fetch`` with
  ``mode: "no-cors"``); it cannot read the answer, but the change is made. Browsers name the
  page in ``Origin`` on every such request, so a state-changing request whose ``Origin`` is
  neither this server nor one of ``server.cors_origins`` is refused. Programs (the CLI,
  curl, the client library) send no ``Origin`` and are not affected.
- **Cross-site reads with side effects**: an ``<img src>`` on any page sends a GET without
  ``Origin``, and a search counts as a retrieval (access counts, promotion of short-term
  facts to long term). Browsers label every request with ``Sec-Fetch-Site``; one that says
  ``cross-site`` or ``same-site`` (another port of this machine) is refused unless its
  ``Origin`` is in ``server.cors_origins``, whatever its method. The page's own files stay
  reachable by a link; the page, the address bar and programs are not affected.

Both refusals are 403 with a JSON error naming the header and the setting that admits it.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from shiyi.config.hosts import is_loopback
from shiyi.config.server_settings import ServerSettings
from shiyi.interfaces.server.openai_wire import guard_error

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
FOREIGN_SITES = frozenset({"cross-site", "same-site"})
"""``Sec-Fetch-Site`` values of a request another page started (``same-site``: another
port or subdomain, which is still another origin)."""
PAGE_PATHS = frozenset({"/", "/healthz"})
PAGE_PREFIXES = ("/ui/",)
"""The memory page's files, which hold no data: a link from anywhere may open them."""


def host_name(authority: str) -> str:
    """``name`` from a ``Host`` value ``name[:port]`` (``[::1]:80`` -> ``::1``), lowercased."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1 : authority.find("]")] if "]" in authority else authority
    name, _, _port = authority.partition(":")
    return name.rstrip(".")


def _loopback_name(name: str) -> bool:
    # RFC 6761: every *.localhost name resolves to loopback and no one else can own it.
    return is_loopback(name) or name.endswith(".localhost")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


class OriginGuard:
    """403 for a foreign ``Host`` on a loopback server and for cross-origin writes."""

    def __init__(self, app: ASGIApp, *, server: ServerSettings) -> None:
        self.app = app
        self.allowed_hosts = {host_name(name) for name in server.allowed_hosts}
        self.any_host = "*" in server.allowed_hosts
        self.loopback_only = is_loopback(server.host)
        self.cors_origins = {origin.rstrip("/").lower() for origin in server.cors_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host") or ""
        refusal = (
            self.host_refusal(host) or self.site_refusal(scope) or self.origin_refusal(scope, host)
        )
        if refusal is None:
            await self.app(scope, receive, send)
            return
        code, message = refusal
        shaped = guard_error(scope["path"], 403, code, message)  # OpenAI's clients read theirs
        body = json.dumps(shaped or {"error": {"code": code, "message": message}}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 403, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def host_refusal(self, host: str) -> tuple[str, str] | None:
        name = host_name(host)
        if self.any_host or name in self.allowed_hosts:
            return None
        if not self.loopback_only or _loopback_name(name):
            return None
        return (
            "forbidden_host",
            f"Host {host!r} is not this server, which listens on loopback only; a web page "
            "may be trying DNS rebinding. If you reach the server through a proxy under this "
            "name, add it to server.allowed_hosts.",
        )

    def site_refusal(self, scope: Scope) -> tuple[str, str] | None:
        site = (_header(scope, b"sec-fetch-site") or "").strip().lower()
        if site not in FOREIGN_SITES:
            return None
        path = scope.get("path", "")
        if path in PAGE_PATHS or path.startswith(PAGE_PREFIXES):
            return None
        origin = _header(scope, b"origin")
        if origin is not None and origin.rstrip("/").lower() in self.cors_origins:
            return None
        return (
            "cross_site",
            f"a {scope.get('method')} that a page on another site started (Sec-Fetch-Site: "
            f"{site}) was refused: another site may not use this server, and a read counts "
            "as a retrieval. To let a web app on another origin use the API, add it to "
            "server.cors_origins.",
        )

    def origin_refusal(self, scope: Scope, host: str) -> tuple[str, str] | None:
        if scope.get("method", "GET") in SAFE_METHODS:
            return None
        origin = _header(scope, b"origin")
        if origin is None or self._same_origin(origin, host):
            return None
        if origin.rstrip("/").lower() in self.cors_origins:
            return None
        return (
            "cross_origin",
            f"a {scope.get('method')} from the page at Origin {origin!r} was refused: "
            "another site may not change this server's data. To let a web app on that "
            "origin use the API, add it to server.cors_origins.",
        )

    @staticmethod
    def _same_origin(origin: str, host: str) -> bool:
        parts = urlsplit(origin.strip())
        return bool(parts.netloc) and parts.netloc.lower() == host.strip().lower()
