"""The MCP tools over streamable HTTP at ``/mcp`` on ``shiyi serve``.

The route sits inside the API's middleware, so a call is authorised exactly like a REST
request: the bearer token names the user (``server.users``), the Host and Origin checks
apply, and each tool acts as that user (another user's ids are not found).  Stateless:
every POST carries its own token, so no MCP session outlives the identity it was made by.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request

from shiyi.api.knowledge_schemas import KnowledgeHits
from shiyi.errors import ShiyiError
from shiyi.interfaces.mcp.tools import build_server
from shiyi.interfaces.server.deps import memory_ops
from shiyi.interfaces.server.identity import STATE_KEY, Identity
from shiyi.interfaces.server.knowledge_routes import Knowledge, passages_for
from shiyi.interfaces.server.service import AgentService
from shiyi.memory.operations import MemoryOperations

PATH = "/mcp"


class ServedBackend:
    """Each call as the request's caller, on the server's memory and knowledge base."""

    def __init__(self, service: AgentService, knowledge: Knowledge) -> None:
        self.service = service
        self.knowledge = knowledge

    def operations(self, ctx: Context) -> MemoryOperations:
        return memory_ops(self.service, caller(ctx))

    async def search_knowledge(self, ctx: Context, query: str, limit: int) -> KnowledgeHits:
        caller(ctx)  # only a caller the API would answer
        return await passages_for(self.knowledge, query, limit)


def caller(ctx: Context) -> Identity:
    """The identity the guard middleware resolved from the request's bearer token."""
    request = ctx.request_context.request
    identity = (
        request.scope.get("state", {}).get(STATE_KEY) if isinstance(request, Request) else None
    )
    if not isinstance(identity, Identity):
        raise ShiyiError("no caller on this MCP request: is it served by `shiyi serve`?")
    return identity


def install_mcp(app: FastAPI, service: AgentService) -> Any:
    """Add ``POST/GET/DELETE /mcp``; returns the context manager the app's lifespan runs."""
    server = build_server(ServedBackend(service, app.state.knowledge))
    # The API's OriginGuard already checks Host and Origin for every route, /mcp included.
    inner = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=service.settings.server.max_body_bytes,
    )
    for route in inner.routes:
        app.router.routes.append(route)

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return running
