"""The MCP tools: memory's operations with short exact descriptions, answering with
structured content (the API's wire models) and readable text (dates, speakers, ids).

A :class:`Backend` says, per call, whose memory a tool acts on: the bearer token's user
over HTTP, the configured user over stdio.  A shiyi error comes back as an MCP tool error
(``isError``) carrying its message.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import takewhile
from typing import Annotated, Any, Literal, Protocol, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from shiyi import __version__
from shiyi.api.import_schemas import ImportIn, ImportOut, ImportTurnIn
from shiyi.api.knowledge_schemas import KnowledgeHits
from shiyi.api.schemas import (
    EntityList,
    EventOut,
    FactHistory,
    FactKind,
    FactOut,
    FactPage,
    ForgetOut,
    ForgetPlanOut,
    MemoryEvents,
    MemoryHits,
    MemoryJobs,
    RememberedOut,
    Scope,
)
from shiyi.errors import ShiyiError
from shiyi.index.spelling import reading_note
from shiyi.interfaces.mcp import text as say
from shiyi.interfaces.mcp.fit import fitting
from shiyi.memory.operations import MemoryOperations, SearchMode

T = TypeVar("T")
INSTRUCTIONS = (
    "shiyi's long-term memory of this user: search it before answering about the user's "
    "past, preferences or projects; add what the user asks to remember. Times are UTC."
)


class Backend(Protocol):
    """Whose memory a call acts on, and where the knowledge base is."""

    def operations(self, ctx: Context) -> MemoryOperations: ...

    async def search_knowledge(self, ctx: Context, query: str, limit: int) -> KnowledgeHits: ...


class ChatMessage(BaseModel):
    role: str = Field(min_length=1, max_length=100, description="The speaker: user, a name...")
    content: str = Field(min_length=1, max_length=100_000, pattern=r"\S")
    time: str | None = Field(
        default=None, description="When it was said, ISO 8601 (default: now, in order)."
    )


class Added(BaseModel):
    fact: RememberedOut | None = Field(
        default=None,
        description="The fact stored from ``text``, and whether it is new, confirmed an equal "
        "fact or replaced older values (``replaces``).",
    )
    imported: ImportOut | None = Field(
        default=None, description="The messages queued (the worker extracts facts from them)."
    )


class Record(BaseModel):
    memory: EventOut | FactOut


Id = Annotated[str, Field(min_length=1, max_length=200, description="An event or fact id.")]
Kinds = Annotated[list[FactKind] | None, Field(description="Only facts of these kinds.")]


def result(data: BaseModel, readable: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=readable)],
        structured_content=data.model_dump(mode="json"),
    )


async def run(call: Callable[[], T]) -> T:
    """The blocking operation in a worker thread; a shiyi error as the tool's error."""
    try:
        return await anyio.to_thread.run_sync(call)
    except (ShiyiError, ValidationError) as exc:
        raise ToolError(str(exc)) from None


def epoch(value: str | None, name: str) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ToolError(
            f"{name}: {value!r} is not an ISO 8601 date or time, like 2024-05-01 or "
            "2024-05-01T14:30"
        ) from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def build_server(backend: Backend) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(
        "shiyi", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    deleting = ToolAnnotations(destructive_hint=True, open_world_hint=False)

    @server.tool(description="Remember a fact (text) or a conversation (messages) for this user.")
    async def add_memory(
        ctx: Context,
        text: Annotated[
            str | None,
            # as the HTTP API's POST /v1/memory: a 560 KB fact was stored, then every list of
            # this user's memories outgrew the official client's 1 MiB event limit
            Field(
                min_length=1,
                max_length=100_000,
                pattern=r"\S",
                description="A fact to remember, as said.",
            ),
        ] = None,
        messages: Annotated[
            list[ChatMessage] | None,
            Field(description="A conversation to remember; facts are extracted from it."),
        ] = None,
        kind: FactKind = "semantic",
        key: Annotated[
            str,
            Field(
                max_length=200,
                description="The slot it sets, e.g. 'lives in'; empty: a plain statement "
                "('my favourite colour is green', 'I live in Munich') sets its own.",
            ),
        ] = "",
        scope: Scope = "user",
    ) -> Annotated[CallToolResult, Added]:
        if (text is None) == (messages is None):
            raise ToolError("give either text (one fact) or messages (a conversation)")
        ops = backend.operations(ctx)
        if text is not None:
            said = text
            fact = await run(lambda: ops.add(said, kind=kind, key=key, scope=scope))
            return result(Added(fact=fact), say.remembered(fact))
        assert messages is not None
        part = await run(lambda: _conversation(messages))
        queued = await run(lambda: ops.import_turns(part))
        return result(
            Added(imported=queued),
            f"Queued {queued.queued} messages as conversation {queued.session_id}.",
        )

    @server.tool(
        description="Search this user's memories: facts and remembered turns.",
        annotations=read_only,
    )
    async def search_memory(
        ctx: Context,
        query: Annotated[str, Field(min_length=1, max_length=2000)],
        mode: SearchMode = "hybrid",
        kinds: Kinds = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        since: Annotated[str | None, Field(description="ISO 8601: not before this.")] = None,
        until: Annotated[str | None, Field(description="ISO 8601: not after this.")] = None,
    ) -> Annotated[CallToolResult, MemoryHits]:
        ops = backend.operations(ctx)
        start, end = epoch(since, "since"), epoch(until, "until")
        found = await run(
            lambda: ops.search(query, mode=mode, kinds=kinds, limit=limit, since=start, until=end)
        )
        read = await run(lambda: ops.read_as(query))
        shown = fitting(found, say.hit_line)
        return result(
            MemoryHits(hits=found[:shown], read_as=read),
            reading_note(read) + say.hits(found[:shown], left_out=len(found) - shown),
        )

    @server.tool(description="List this user's facts, newest change first.", annotations=read_only)
    async def list_memories(
        ctx: Context,
        kinds: Kinds = None,
        scopes: list[Scope] | None = None,
        statuses: Annotated[
            list[Literal["active", "pending", "superseded", "expired"]] | None,
            Field(description="Default: active and pending."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> Annotated[CallToolResult, FactPage]:
        ops = backend.operations(ctx)
        page = await run(
            lambda: ops.list_facts(
                kinds=kinds or (),
                scopes=scopes or (),
                statuses=statuses or (),
                limit=limit,
                offset=offset,
            )
        )
        page.facts = page.facts[: fitting(page.facts, say.fact_line)]
        return result(page, say.facts(page.facts, page.total, offset))

    @server.tool(description="One memory (fact or turn) by id.", annotations=read_only)
    async def get_memory(ctx: Context, id: Id) -> Annotated[CallToolResult, Record]:
        ops = backend.operations(ctx)
        found = await run(lambda: ops.get(id))
        readable = say.fact(found) if isinstance(found, FactOut) else say.event(found)
        return result(Record(memory=found), readable)

    @server.tool(description="Edit a fact: its value, key, kind or confidence.")
    async def update_memory(
        ctx: Context,
        id: Id,
        value: Annotated[str | None, Field(min_length=1, max_length=100_000)] = None,
        key: Annotated[str | None, Field(max_length=200)] = None,
        kind: FactKind | None = None,
        confidence: Annotated[float | None, Field(ge=0, le=1)] = None,
    ) -> Annotated[CallToolResult, FactOut]:
        if value is None and key is None and kind is None and confidence is None:
            # nothing to change had answered "Updated" and moved its updated_at
            raise ToolError("give what to change: value, key, kind and/or confidence")
        ops = backend.operations(ctx)
        fact = await run(
            lambda: ops.update(id, key=key, value=value, kind=kind, confidence=confidence)
        )
        return result(fact, f"Updated: {say.fact(fact)}")

    @server.tool(
        description="Delete one memory for good, with what derives from it.", annotations=deleting
    )
    async def delete_memory(ctx: Context, id: Id) -> Annotated[CallToolResult, ForgetOut]:
        ops = backend.operations(ctx)
        done = await run(lambda: ops.delete(id))
        return result(done, say.forgotten(done))

    @server.tool(description="Every version of a fact, oldest first.", annotations=read_only)
    async def memory_history(
        ctx: Context,
        key: Annotated[str, Field(max_length=200, description="The slot, e.g. 'lives in'.")] = "",
        entity: Annotated[str, Field(max_length=200, description="Facts about it.")] = "",
    ) -> Annotated[CallToolResult, FactHistory]:
        if not key and not entity:
            raise ToolError("give key and/or entity")
        ops = backend.operations(ctx)
        versions = await run(lambda: ops.history(key=key, entity=entity))
        return result(FactHistory(facts=versions), say.history(versions))

    @server.tool(
        description="Forget what a search finds or an entity; dry_run lists it.",
        annotations=deleting,
    )
    async def forget_memories(
        ctx: Context,
        by: Literal["query", "entity"],
        target: Annotated[str, Field(min_length=1, max_length=2000, description="Query or name.")],
        limit: Annotated[int, Field(ge=1, le=100, description="Hits of a query.")] = 5,
        dry_run: bool = True,
    ) -> Annotated[CallToolResult, ForgetPlanOut]:
        ops = backend.operations(ctx)
        plan = await run(lambda: ops.forget(by, target, limit=limit, dry_run=dry_run))
        return result(plan, say.forget_plan(plan))

    @server.tool(
        description="The remembered turns around an anchor (run:iteration:segment).",
        annotations=read_only,
    )
    async def expand_anchor(
        ctx: Context,
        anchor: Annotated[str, Field(pattern=r"^[^\t\n\r\f\v ]+:[0-9]+:[0-9]+$", max_length=200)],
        window: Annotated[int, Field(ge=0, le=50)] = 3,
    ) -> Annotated[CallToolResult, MemoryEvents]:
        ops = backend.operations(ctx)
        found = await run(lambda: ops.expand(anchor, window))
        return result(MemoryEvents(events=found), say.events(found))

    @server.tool(
        description="Entities this user's facts are about, most facts first.", annotations=read_only
    )
    async def list_entities(
        ctx: Context,
        query: Annotated[str, Field(max_length=200, description="A part of the name.")] = "",
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> Annotated[CallToolResult, EntityList]:
        ops = backend.operations(ctx)
        found = await run(lambda: ops.entities(query=query, limit=limit))
        return result(EntityList(entities=found), say.entities(found))

    @server.tool(
        description="Search the knowledge base (ingested documents).", annotations=read_only
    )
    async def search_knowledge(
        ctx: Context,
        query: Annotated[str, Field(min_length=1, max_length=2000)],
        limit: Annotated[int, Field(ge=1, le=50)] = 5,
    ) -> Annotated[CallToolResult, KnowledgeHits]:
        try:
            found = await backend.search_knowledge(ctx, query, limit)
        except ShiyiError as exc:
            raise ToolError(str(exc)) from None
        return result(found, reading_note(found.read_as) + say.passages(found))

    @server.tool(
        description="The memory job queue: pending, running, failed.", annotations=read_only
    )
    async def memory_jobs(ctx: Context) -> Annotated[CallToolResult, MemoryJobs]:
        ops = backend.operations(ctx)
        queue = await run(ops.jobs)
        return result(queue, say.jobs(queue))

    return server


def _conversation(messages: list[ChatMessage]) -> ImportIn:
    """The messages as one conversation's turns (a new one per call), in order."""
    if not messages:
        raise ToolError("messages is empty: give at least one message")
    name = f"mcp-{uuid.uuid4().hex[:12]}"
    said = [epoch(m.time, f"messages[{i}].time") for i, m in enumerate(messages)]
    turns = []
    for i, (message, ts) in enumerate(zip(messages, _in_order(said), strict=True)):
        turns.append(
            ImportTurnIn(
                id=f"{name}-{i}",
                run="mcp",
                ts=ts,
                role=message.role.strip().lower(),
                content=message.content,
                iteration=i,  # each message its own anchor (run:i:0), as importers do
            )
        )
    return ImportIn(session_id=name, turns=turns)


def _in_order(said: list[float | None]) -> list[float]:
    """Each message's time: its own, else a millisecond after the message before it (or
    before the first timed one), so an untimed reply to a message from 2023 is not "now";
    with no times at all, now, in order."""
    if all(ts is None for ts in said):
        now = time.time()
        return [now + i * 0.001 for i in range(len(said))]
    first = next(ts for ts in said if ts is not None)
    lead = sum(1 for _ in takewhile(lambda ts: ts is None, said))
    times: list[float] = []
    for i, ts in enumerate(said):
        if ts is not None:
            times.append(ts)
        elif times:
            times.append(times[-1] + 0.001)
        else:
            times.append(first - (lead - i) * 0.001)
    return times
