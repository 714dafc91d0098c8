"""``shiyi mcp``: the memory tools over stdio, as the configured user.

Like ``shiyi memory``, it goes through the API of the ``shiyi serve`` or ``shiyi chat``
that owns the data dir; when none does, it opens the store itself (with its worker, for
as long as the MCP client keeps it running).  Only the protocol goes to stdout.

When the store cannot be opened (another process without an API, such as ``shiyi run``,
holds it), the server still starts: it had exited before the handshake, and an MCP client
shows that only as "server disconnected".  Each tool call then answers with why, and tries
again, so the tools work once the store is free.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread
import typer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from shiyi.api.knowledge_schemas import KnowledgeHits
from shiyi.errors import NotFound, ShiyiError
from shiyi.memory.operations import MemoryOperations

if TYPE_CHECKING:
    from shiyi.config import Settings
    from shiyi.knowledge import KnowledgeBase
    from shiyi.memory.service import Memory


class StdioBackend:
    """Every call as the configured user, over ``ops``; the knowledge base via ``search``."""

    def __init__(self, ops: MemoryOperations, search: Callable[[str, int], KnowledgeHits]) -> None:
        self.ops = ops
        self.search = search

    def operations(self, ctx: Context) -> MemoryOperations:
        return self.ops

    async def search_knowledge(self, ctx: Context, query: str, limit: int) -> KnowledgeHits:
        return await anyio.to_thread.run_sync(self.search, query, limit)


class LocalBackend:
    """The store opened here, on the first call that finds it free."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._open: tuple[MemoryOperations, LocalKnowledge] | None = None
        self._lock = threading.Lock()

    def try_open(self) -> str | None:
        """None once the store is open; else why it cannot be."""
        from shiyi.app import open_memory
        from shiyi.memory.operations.local import LocalMemory

        with self._lock:
            if self._open is None:
                try:
                    memory = open_memory(self.settings, start_worker=True)
                except ShiyiError as exc:
                    return str(exc)
                except OSError as exc:  # the data dir cannot be made or read
                    where = f" {exc.filename}" if exc.filename else ""
                    return (
                        f"cannot open{where}: {exc.strerror or exc}; set SHIYI_HOME (or home: "
                        "in shiyi.yaml) to a folder you can write"
                    )
                self._open = (LocalMemory(memory), LocalKnowledge(self.settings, memory))
        return None

    def _opened(self) -> tuple[MemoryOperations, LocalKnowledge]:
        why = self.try_open()
        if why is not None or self._open is None:
            raise ToolError(f"{why}; this call can be made again once the store is free")
        return self._open

    def operations(self, ctx: Context) -> MemoryOperations:
        return self._opened()[0]

    async def search_knowledge(self, ctx: Context, query: str, limit: int) -> KnowledgeHits:
        return await anyio.to_thread.run_sync(self._opened()[1].search, query, limit)

    def close(self) -> None:
        if self._open is not None:
            knowledge = self._open[1]
            knowledge.close()
            knowledge.memory.close()


class LocalKnowledge:
    """The data dir's knowledge base, opened on the first search (if there is one)."""

    def __init__(self, settings: Settings, memory: Memory) -> None:
        self.settings, self.memory = settings, memory
        self._kb: KnowledgeBase | None = None
        self._lock = threading.Lock()

    def search(self, query: str, limit: int) -> KnowledgeHits:
        """Blocking, in an anyio worker thread (the search itself is async)."""
        import anyio.from_thread

        from shiyi.interfaces.server.knowledge_routes import passage_out
        from shiyi.knowledge import KnowledgeBase

        with self._lock:
            if self._kb is None:
                if not KnowledgeBase.exists(self.settings):
                    raise NotFound("the knowledge base is empty: add a document first")
                from shiyi.app import open_knowledge

                self._kb = open_knowledge(self.settings, embedder=self.memory.embedder)
        kb = self._kb
        result = anyio.from_thread.run(kb.search, query, kb.options(limit=limit))
        chunks = kb.store.chunks([p.chunk_id for p in result.passages])
        root = self.settings.workspace
        return KnowledgeHits(
            passages=[
                passage_out(p, chunks[p.chunk_id].text, chunks[p.chunk_id].doc_id, root)
                for p in result.passages
                if p.chunk_id in chunks
            ],
            read_as=result.read_as,
        )

    def close(self) -> None:
        if self._kb is not None:
            self._kb.close()


def serve_stdio(config: Path | None) -> None:
    """Run the tools on stdin/stdout until the client closes them."""
    from shiyi.client.memory_ops import RemoteMemory
    from shiyi.interfaces.cli.common import load
    from shiyi.interfaces.cli.remote import service_client
    from shiyi.interfaces.mcp.tools import build_server

    settings = load(config)
    client = service_client(settings)
    if client is not None:
        with client:
            build_server(StdioBackend(RemoteMemory(client), client.knowledge_search)).run("stdio")
        return
    local = LocalBackend(settings)
    why = local.try_open()
    if why is not None:
        typer.echo(f"shiyi: {why}; each tool call says so and tries again", err=True)
    try:
        build_server(local).run("stdio")
    finally:
        local.close()
