"""Who a request acts as: each bearer token maps to a user (and agent).

``server.token`` acts as the configured ``memory.user_id``/``agent_id``; each entry of
``server.users`` as its own user.  Without any token (a loopback, single-user server) every
request is the configured identity, as before.  The guard middleware resolves the token
once and leaves the identity in the request's scope state; routes get it from
:func:`current_identity` and scope every read, write and delete by it.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from starlette.types import Scope

from shiyi.config.settings import Settings
from shiyi.memory.scopes import Viewer
from shiyi.sessions.records import SessionOwner

STATE_KEY = "shiyi_identity"


@dataclass(frozen=True, slots=True)
class Identity:
    user_id: str
    agent_id: str
    workspace_id: str
    configured: bool = False
    """The config's own identity: it also owns the sessions logged before sessions had
    owners (their user is the column default, 'default')."""

    @property
    def viewer(self) -> Viewer:
        return Viewer(self.user_id, self.agent_id, self.workspace_id)

    @property
    def owner(self) -> SessionOwner:
        return SessionOwner(self.user_id, self.agent_id, legacy=self.configured)


class Identities:
    """The token table of one server."""

    def __init__(self, settings: Settings) -> None:
        memory, server = settings.memory, settings.server
        workspace = memory.lifecycle.workspace_id
        self.configured = Identity(memory.user_id, memory.agent_id, workspace, configured=True)
        self._tokens: list[tuple[bytes, Identity]] = []
        if server.token is not None and server.token.get_secret_value():
            self._tokens.append((server.token.get_secret_value().encode(), self.configured))
        for user in server.users:
            who = Identity(user.user_id, user.agent_id or memory.agent_id, workspace)
            self._tokens.append((user.token.get_secret_value().encode(), who))

    @property
    def required(self) -> bool:
        """Requests must carry a token (one is configured)."""
        return bool(self._tokens)

    def resolve(self, scope: Scope) -> Identity | None:
        """The identity of the request's bearer token; None if it has none of ours.

        Without tokens, everyone is the configured identity.  Compares with every token,
        in constant time each, so the time taken says nothing about which one matched."""
        if not self._tokens:
            return self.configured
        given = _bearer(scope)
        found: Identity | None = None
        for token, who in self._tokens:
            if hmac.compare_digest(given, token) and given:
                found = who
        return found


def _bearer(scope: Scope) -> bytes:
    header = b""
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            header = bytes(value)
            break
    scheme, _, given = header.partition(b" ")
    return given.strip() if scheme.lower() == b"bearer" else b""


def remember_identity(scope: Scope, identity: Identity) -> None:
    scope.setdefault("state", {})[STATE_KEY] = identity


async def current_identity(request: Request) -> Identity:
    """The caller, as the guard middleware resolved it (async: no thread hand-off)."""
    identity = request.scope.get("state", {}).get(STATE_KEY)
    if not isinstance(identity, Identity):
        raise RuntimeError("no identity on the request: is the guard middleware installed?")
    return identity


Caller = Annotated[Identity, Depends(current_identity)]
