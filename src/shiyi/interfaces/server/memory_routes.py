"""``/v1/memory``: search, read, edit (facts only) and forget long-term memories.

Every route calls memory's operations (:class:`~shiyi.memory.operations.local.LocalMemory`) as the
caller: the rules live in memory, the routes only speak HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from shiyi.api.import_schemas import ImportIn, ImportOut
from shiyi.api.schemas import (
    EntityList,
    EventOut,
    FactHistory,
    FactIn,
    FactOut,
    FactPatch,
    ForgetIn,
    ForgetOut,
    ForgetPlanOut,
    JobsRetried,
    MemoryEvents,
    MemoryHealth,
    MemoryHits,
    MemoryJobs,
    ReadAs,
    RememberedOut,
)
from shiyi.interfaces.server.deps import get_service, memory_ops
from shiyi.interfaces.server.identity import Caller
from shiyi.interfaces.server.service import AgentService
from shiyi.memory.models import FactKind
from shiyi.memory.operations import SearchMode

router = APIRouter(prefix="/v1/memory", tags=["memory"])
Service = Annotated[AgentService, Depends(get_service)]
MemoryId = Annotated[str, "an event or fact id"]


@router.get("/search", response_model=MemoryHits)
async def search(
    service: Service,
    who: Caller,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    mode: SearchMode = "hybrid",
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    kind: Annotated[list[FactKind] | None, Query()] = None,
    since: Annotated[
        float | None, Query(description="Only hits at or after this time (epoch seconds).")
    ] = None,
    until: Annotated[
        float | None, Query(description="Only hits at or before this time (epoch seconds).")
    ] = None,
) -> MemoryHits:
    ops = memory_ops(service, who)
    hits = await asyncio.to_thread(
        ops.search, q, mode=mode, kinds=kind, limit=limit, since=since, until=until
    )
    return MemoryHits(hits=hits, read_as=await asyncio.to_thread(ops.read_as, q))


@router.get("/read-as", response_model=ReadAs)
async def read_as(
    service: Service, who: Caller, q: Annotated[str, Query(min_length=1, max_length=2000)]
) -> ReadAs:
    """How a search reads the query's typing slips, searching nothing."""
    ops = memory_ops(service, who)
    return ReadAs(read_as=await asyncio.to_thread(ops.read_as, q))


@router.post("", status_code=201, response_model=RememberedOut)
async def remember(service: Service, who: Caller, body: FactIn) -> RememberedOut:
    """Remember a fact explicitly (long term, full confidence), like the remember tool; the
    answer says whether it is new, confirmed an equal fact or replaced older values."""
    ops = memory_ops(service, who)
    return await asyncio.to_thread(
        ops.add, body.text, kind=body.kind, key=body.key, scope=body.scope
    )


@router.get("/history", response_model=FactHistory)
async def history(
    service: Service,
    who: Caller,
    key: Annotated[str, Query(max_length=200)] = "",
    entity: Annotated[str, Query(max_length=200)] = "",
) -> FactHistory:
    """Every version of a fact slot (by ``key`` and/or ``entity``) the caller may see, oldest
    first: what was true when, and what replaced it."""
    ops = memory_ops(service, who)
    return FactHistory(facts=await asyncio.to_thread(ops.history, key=key, entity=entity))


@router.get("/entities", response_model=EntityList)
async def entities(
    service: Service,
    who: Caller,
    q: Annotated[str, Query(max_length=200, description="A part of the name.")] = "",
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> EntityList:
    """Entities the caller's current facts are about, most facts first."""
    ops = memory_ops(service, who)
    return EntityList(entities=await asyncio.to_thread(ops.entities, query=q, limit=limit))


@router.get("/expand", response_model=MemoryEvents)
async def expand(
    service: Service,
    who: Caller,
    anchor: Annotated[
        str,
        Query(
            max_length=200,
            # Explicit characters, not \s and \d: those differ between Python/Rust and the
            # JSON-schema (ECMA) regex clients validate with (U+0085 is \s only in Python).
            # The run part may hold colons (imported runs: conv-1:session_3:1:0).
            pattern=r"^[^\t\n\r\f\v ]+:[0-9]+:[0-9]+$",
            description="run:iteration:segment, like run_abc123:2:0",
        ),
    ],
    window: Annotated[int, Query(ge=0, le=50)] = 3,
) -> MemoryEvents:
    """The remembered turns around an anchor."""
    events = await asyncio.to_thread(memory_ops(service, who).expand, anchor, window)
    return MemoryEvents(events=events)


@router.get("/health", response_model=MemoryHealth)
async def health(service: Service, who: Caller) -> MemoryHealth:
    """Counts of what the caller may read: their sessions and runs, the turns, facts,
    entities and relations they may see (numbers only).  The store-wide queue, index and
    cache numbers go to the server's own identity only: they grow with every user's
    activity (issue 29: store-wide counts let one user watch another)."""
    sessions = {s.id for s in service.log.list_sessions(limit=1_000_000, owner=who.owner)}
    active = len(service.active_run_ids(sessions))
    if service.memory is None:
        return MemoryHealth(enabled=False, counts={}, sessions=len(sessions), active_runs=active)
    detail = await asyncio.to_thread(memory_ops(service, who).health)
    detail.sessions = len(sessions)
    counts = {
        "events": detail.events,
        "facts": detail.facts,
        "entities": detail.entities,
        "relations": detail.relations,
        "sessions": detail.sessions,
    }
    if who.configured:
        counts |= {f"embedded_{node}": n for node, n in detail.embedded.items()}
        counts |= {"keyword_docs": detail.keyword_docs, "pending_jobs": detail.jobs_pending}
    return MemoryHealth(
        enabled=True, counts=counts, sessions=len(sessions), active_runs=active, detail=detail
    )


@router.get("/export", response_class=StreamingResponse)
async def export(service: Service, who: Caller) -> StreamingResponse:
    """Every event and fact the caller may see, as JSON lines (events oldest first, then
    facts), like ``shiyi memory export``."""
    lines = await asyncio.to_thread(memory_ops(service, who).export)
    return StreamingResponse((line + "\n" for line in lines), media_type="application/x-ndjson")


@router.get("/jobs", response_model=MemoryJobs)
async def jobs(service: Service, who: Caller) -> MemoryJobs:
    """Background jobs by kind and status; the failed ones' errors for the configured
    identity only."""
    return await asyncio.to_thread(memory_ops(service, who).jobs)


@router.post("/jobs/retry", response_model=JobsRetried)
async def retry_jobs(service: Service, who: Caller) -> JobsRetried:
    """Queue failed jobs again (the configured identity only: the queue is store-wide)."""
    return await asyncio.to_thread(memory_ops(service, who).retry_jobs)


@router.get("/{memory_id}", response_model=EventOut | FactOut)
async def get_memory(service: Service, who: Caller, memory_id: MemoryId) -> EventOut | FactOut:
    return await asyncio.to_thread(memory_ops(service, who).get, memory_id)


@router.patch("/{memory_id}", response_model=FactOut)
async def patch_memory(
    service: Service, who: Caller, memory_id: MemoryId, patch: FactPatch
) -> FactOut:
    ops = memory_ops(service, who)
    return await asyncio.to_thread(
        ops.update,
        memory_id,
        key=patch.key,
        value=patch.value,
        kind=patch.kind,
        confidence=patch.confidence,
    )


@router.delete("/{memory_id}", response_model=ForgetOut)
async def delete_memory(service: Service, who: Caller, memory_id: MemoryId) -> ForgetOut:
    """Forget one memory of the caller's (another user's is not found, like a missing id),
    with what derives from it; the answer says whether its bytes remain on disk."""
    return await asyncio.to_thread(memory_ops(service, who).delete, memory_id)


@router.post("/forget", response_model=ForgetPlanOut)
async def forget_memories(service: Service, who: Caller, body: ForgetIn) -> ForgetPlanOut:
    """Forget what a search finds or an entity, of the caller's (what others may see or write
    stays), as ``shiyi memory forget --query/--entity`` does; ``dry_run`` only lists it."""
    ops = memory_ops(service, who)
    return await asyncio.to_thread(
        ops.forget, body.by, body.text, limit=body.limit, dry_run=body.dry_run
    )


@router.post("/import", response_model=ImportOut)
async def import_conversation(service: Service, who: Caller, body: ImportIn) -> ImportOut:
    """Past turns of one conversation as the caller's, like ``shiyi memory import`` (which
    sends each conversation in parts).  A session or id another user's memory already uses
    is not reused: the turns get the caller's tag and ``renamed_from`` says so."""
    return await asyncio.to_thread(memory_ops(service, who).import_turns, body)
