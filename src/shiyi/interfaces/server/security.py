"""Exposure checks at start-up, bearer-token auth and the request body limit (pure ASGI)."""

from __future__ import annotations

import hmac
import json
from typing import Any

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shiyi.config.hosts import is_loopback
from shiyi.config.server_settings import ServerSettings
from shiyi.errors import ConfigError
from shiyi.interfaces.server.identity import Identities, remember_identity
from shiyi.interfaces.server.openai_wire import guard_error
from shiyi.interfaces.server.origin import OriginGuard

OPEN_PATHS = frozenset({"/healthz", "/"})
OPEN_PREFIXES = ("/ui/",)
"""The memory page's static files: they hold no data, and the page asks for the token."""


def check_exposure(server: ServerSettings) -> None:
    """Refuse to serve beyond this machine without a token."""
    if is_loopback(server.host):
        return
    if (server.token is None or not server.token.get_secret_value()) and not server.users:
        raise ConfigError(
            f"server.host is {server.host!r}, which is reachable from other machines; set a "
            "bearer token in server.token (or the SHIYI_SERVER__TOKEN environment variable) "
            "or one per user in server.users, or bind to 127.0.0.1."
        )


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value)
    return None


def _open(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith(OPEN_PREFIXES)


def bearer_ok(scope: Scope, token: bytes) -> bool:
    header = _header(scope, b"authorization") or b""
    scheme, _, given = header.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), token)


async def _send_error(
    send: Send, path: str, status: int, code: str, message: str, **headers: str
) -> None:
    shaped = guard_error(path, status, code, message)  # OpenAI's clients read their shape
    body = json.dumps(shaped or {"error": {"code": code, "message": message}}).encode()
    raw: list[tuple[bytes, bytes]] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    raw += [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    """401 without a known bearer token (the caller's identity is left in the scope state);
    413 for bodies over ``max_body`` (declared or streamed)."""

    def __init__(self, app: ASGIApp, *, identities: Identities, max_body: int) -> None:
        self.app = app
        self.identities = identities
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        identity = self.identities.resolve(scope)
        if identity is not None:
            remember_identity(scope, identity)
        elif not _open(scope["path"]):
            await _send_error(
                send,
                scope["path"],
                401,
                "unauthorized",
                "missing or wrong bearer token (Authorization: Bearer <server.token>)",
                www_authenticate="Bearer",
            )
            return
        if self._declared_too_large(scope):
            await _send_error(
                send, scope["path"], 413, "payload_too_large", self._too_large_message()
            )
            return
        await self.app(scope, self._limited(receive), send)

    def _too_large_message(self) -> str:
        return f"request body larger than server.max_body_bytes ({self.max_body} bytes)"

    def _declared_too_large(self, scope: Scope) -> bool:
        length = _header(scope, b"content-length")
        try:
            return length is not None and int(length) > self.max_body
        except ValueError:
            return False

    def _limited(self, receive: Receive) -> Receive:
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise HTTPException(413, self._too_large_message())
            return message

        return limited


def install_security(app: FastAPI, server: ServerSettings, identities: Identities) -> None:
    """Auth and limits, inside the Host/Origin guard, inside CORS (preflights need no token)."""
    check_exposure(server)
    app.add_middleware(GuardMiddleware, identities=identities, max_body=server.max_body_bytes)
    app.add_middleware(OriginGuard, server=server)
    if server.cors_origins:
        options: dict[str, Any] = {
            "allow_origins": server.cors_origins,
            "allow_methods": ["*"],
            "allow_headers": ["*"],
        }
        app.add_middleware(CORSMiddleware, **options)
