"""``/v1/memory``: search, read, edit (facts only) and forget long-term memories."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from shiyi.api.import_schemas import ImportIn, ImportOut
from shiyi.api.schemas import (
    EventOut,
    FactHistory,
    FactIn,
    FactOut,
    FactPatch,
    FailedJobOut,
    ForgetIn,
    ForgetOut,
    ForgetPlanOut,
    JobBacklogOut,
    JobCount,
    JobsRetried,
    MemoryEvents,
    MemoryHealth,
    MemoryHits,
    MemoryJobs,
)
from shiyi.errors import Conflict, NotFound, NothingToForget, ShiyiError
from shiyi.interfaces.server.deps import get_service, require_memory
from shiyi.interfaces.server.fact_views import strip_key_prefix
from shiyi.interfaces.server.identity import Caller
from shiyi.interfaces.server.service import AgentService
from shiyi.interfaces.server.wire import event_out, fact_detail, fact_out, health_detail, hit_out
from shiyi.memory.export import export_lines
from shiyi.memory.lifecycle.facts import normalize_key
from shiyi.memory.lifecycle.forget import COMPACT_HINT, ForgetPlan, ForgetReport
from shiyi.memory.models import EventRecord, FactKind, FactRecord
from shiyi.memory.retriever import Mode
from shiyi.memory.service import Memory

router = APIRouter(prefix="/v1/memory", tags=["memory"])
Service = Annotated[AgentService, Depends(get_service)]
MemoryId = Annotated[str, "an event or fact id"]


@router.get("/search", response_model=MemoryHits)
async def search(
    service: Service,
    who: Caller,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    mode: Mode = "hybrid",
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    kind: Annotated[list[FactKind] | None, Query()] = None,
) -> MemoryHits:
    memory = require_memory(service, who)
    hits = await asyncio.to_thread(memory.search, q, mode=mode, kinds=kind, limit=limit)
    return MemoryHits(hits=[hit_out(hit) for hit in hits])


@router.post("", status_code=201, response_model=FactOut)
async def remember(service: Service, who: Caller, body: FactIn) -> FactOut:
    """Remember a fact explicitly (long term, full confidence), like the remember tool."""
    memory = require_memory(service, who)
    text = strip_key_prefix(body.key, body.text)
    if not text:
        raise ShiyiError(f"the text {body.text!r} holds only the key {body.key!r}: give the value")
    fact = await asyncio.to_thread(
        memory.remember,
        text,
        kind=body.kind,
        key=body.key,
        scope=body.scope,
    )
    return fact_out(fact)


@router.get("/history", response_model=FactHistory)
async def history(
    service: Service,
    who: Caller,
    key: Annotated[str, Query(max_length=200)] = "",
    entity: Annotated[str, Query(max_length=200)] = "",
) -> FactHistory:
    """Every version of a fact slot (by ``key`` and/or ``entity``) the caller may see, oldest
    first: what was true when, and what replaced it."""
    memory = require_memory(service, who)
    # Nothing asked, or a name no memory knows: no versions.  Not an error naming the
    # entity, which would tell one user which names another user's memories hold.
    if (not key and not entity) or (entity and not memory.store.find_entities([entity])):
        return FactHistory(facts=[])
    facts = await asyncio.to_thread(memory.history, key=key, entity=entity)
    return FactHistory(facts=[fact_detail(fact) for fact in facts])


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
    events = await asyncio.to_thread(require_memory(service, who).expand, anchor, window)
    return MemoryEvents(events=[event_out(event) for event in events])


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
    memory = require_memory(service, who)
    detail = await asyncio.to_thread(memory.visible_health)
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
        enabled=True,
        counts=counts,
        sessions=len(sessions),
        active_runs=active,
        detail=health_detail(detail),
    )


@router.get("/export", response_class=StreamingResponse)
async def export(service: Service, who: Caller) -> StreamingResponse:
    """Every event and fact the caller may see, as JSON lines (events oldest first, then
    facts), like ``shiyi memory export``."""
    memory = require_memory(service, who)
    lines = await asyncio.to_thread(lambda: list(export_lines(memory.store, memory.viewer)))
    return StreamingResponse((line + "\n" for line in lines), media_type="application/x-ndjson")


@router.get("/jobs", response_model=MemoryJobs)
async def jobs(service: Service, who: Caller) -> MemoryJobs:
    """Background jobs by kind and status; the failed ones' errors for the configured
    identity only."""
    memory = require_memory(service, who)
    failed = await asyncio.to_thread(memory.jobs.failed) if who.configured else []
    rows = await asyncio.to_thread(memory.jobs.summary)
    backlog = await asyncio.to_thread(memory.jobs.backlog)
    waiting = [JobBacklogOut.model_validate(b, from_attributes=True) for b in backlog]
    if not who.configured:
        waiting = [w.model_copy(update={"reason": ""}) for w in waiting]
    return MemoryJobs(
        summary=[JobCount(kind=r.kind, status=r.status, count=r.count) for r in rows],
        failed=[FailedJobOut.model_validate(f, from_attributes=True) for f in failed],
        # Due now or running, of the kinds the worker can run: what --run waits for (an
        # extraction job without a fast model is not due, or --run waited an hour for it).
        ready=memory.jobs.ready_count(memory.worker.ready_kinds()),
        waiting=waiting,
        runnable=memory.worker.ready_kinds(),
    )


@router.post("/jobs/retry", response_model=JobsRetried)
async def retry_jobs(service: Service, who: Caller) -> JobsRetried:
    """Queue failed jobs again (the configured identity only: the queue is store-wide)."""
    memory = require_memory(service, who)
    if not who.configured:
        raise Conflict("only the server's own identity (server.token) may retry failed jobs")
    requeued = await asyncio.to_thread(memory.jobs.retry_failed)
    memory.worker.wake()
    return JobsRetried(requeued=requeued)


@router.get("/{memory_id}", response_model=EventOut | FactOut)
async def get_memory(service: Service, who: Caller, memory_id: MemoryId) -> EventOut | FactOut:
    found = await asyncio.to_thread(require_memory(service, who).get, memory_id)
    if isinstance(found, EventRecord):
        return event_out(found)
    if isinstance(found, FactRecord):
        return fact_out(found)
    raise NotFound(f"no memory {memory_id!r}; /v1/memory/search shows ids")


@router.patch("/{memory_id}", response_model=FactOut)
async def patch_memory(
    service: Service, who: Caller, memory_id: MemoryId, patch: FactPatch
) -> FactOut:
    memory = require_memory(service, who)
    found = await asyncio.to_thread(memory.get, memory_id)  # None: missing or not theirs
    if isinstance(found, EventRecord):
        raise Conflict(f"{memory_id} is an event: events are read-only, only facts change")
    if found is None:
        raise NotFound(f"no memory {memory_id!r}")
    memory.viewer.check_write(found.scope, memory.settings.lifecycle.workspace_writers)
    fact = _patched(found, patch)
    memory.store.upsert_facts([fact])
    if fact.text != found.text and memory.embedder is not None:
        from shiyi.memory.worker import EMBED

        memory.jobs.enqueue(EMBED, {"node": "fact", "ids": [fact.id]})
        memory.worker.wake()
    return fact_out(fact)


@router.delete("/{memory_id}", response_model=ForgetOut)
async def delete_memory(service: Service, who: Caller, memory_id: MemoryId) -> ForgetOut:
    """Forget one memory of the caller's (another user's is not found, like a missing id),
    with what derives from it; the answer says whether its bytes remain on disk."""
    memory = require_memory(service, who)
    found = await asyncio.to_thread(memory.get, memory_id)
    if found is None:
        raise NotFound(f"no memory {memory_id!r}")
    if isinstance(found, FactRecord):
        memory.viewer.check_write(found.scope, memory.settings.lifecycle.workspace_writers)
    report = await asyncio.to_thread(memory.forget_ids, [memory_id])
    if report.total == 0:
        raise NotFound(f"no memory {memory_id!r}")
    service.drop_idle_agents(report.sessions)
    return forget_out(report)


@router.post("/forget", response_model=ForgetPlanOut)
async def forget_memories(service: Service, who: Caller, body: ForgetIn) -> ForgetPlanOut:
    """Forget what a search finds or an entity, of the caller's (what others may see or write
    stays), as ``shiyi memory forget --query/--entity`` does; ``dry_run`` only lists it."""
    memory = require_memory(service, who)
    nothing = NotFound(f"nothing of yours matches {body.by} {body.text!r}")
    try:
        plan = await asyncio.to_thread(_forget_plan, memory, body)
    except NothingToForget:
        # One answer whether or not the name is stored at all: "no entity named X" for a
        # missing name but not for another user's would tell which names they use (issue 29).
        raise nothing from None
    if not plan.event_ids and not plan.fact_ids:
        raise nothing
    listed = ForgetPlanOut(
        target=plan.target,
        hits=[hit_out(hit) for hit in plan.hits],
        events=len(plan.event_ids),
        facts=len(plan.fact_ids),
    )
    if body.dry_run:
        return listed
    report = await asyncio.to_thread(memory.forgetter().execute, plan)
    service.drop_idle_agents(report.sessions)
    return listed.model_copy(update={"forgotten": forget_out(report)})


@router.post("/import", response_model=ImportOut)
async def import_conversation(service: Service, who: Caller, body: ImportIn) -> ImportOut:
    """Past turns of one conversation as the caller's, like ``shiyi memory import`` (which
    sends each conversation in parts).  A session or id another user's memory already uses
    is not reused: the turns get the caller's tag and ``renamed_from`` says so."""
    memory = require_memory(service, who)
    events = [
        EventRecord(
            t.id,
            body.session_id,
            f"{body.session_id}:{t.run}",
            t.ts,
            t.role,
            t.content,
            "imported",
            iteration=t.iteration,
        )
        for t in body.turns
    ]
    claimed = await asyncio.to_thread(memory.import_conversation, body.session_id, events)
    renamed = claimed.original if claimed.renamed else ""
    return ImportOut(session_id=claimed.session_id, renamed_from=renamed, queued=len(events))


def _patched(found: FactRecord, patch: FactPatch) -> FactRecord:
    """``found`` with the patch applied: the key normalised like every slot's, the value
    without a copy of its key (what the page shows, "lives in: Paris", typed back as the
    value would be stored as "lives in: lives in: Paris")."""
    key = found.key if patch.key is None else normalize_key(patch.key)
    value = found.value
    if patch.value is not None:
        value = strip_key_prefix(key, patch.value)
        if not value:
            raise ShiyiError(
                f"the value {patch.value!r} holds only the key {key!r}: "
                "give the value alone (the key has its own field)"
            )
    return dataclasses.replace(
        found,
        key=key,
        value=value,
        kind=patch.kind or found.kind,
        confidence=found.confidence if patch.confidence is None else patch.confidence,
        updated_at=time.time(),
    )


def _forget_plan(memory: Memory, body: ForgetIn) -> ForgetPlan:
    """The plan in the caller's scope, without the workspace facts it may not write."""
    forgetter = memory.forgetter()
    if body.by == "query":
        whole = forgetter.plan_query(body.text, body.limit)
    else:
        whole = forgetter.plan_entity(body.text)
    plan = memory.within_scope(whole)
    writers = memory.settings.lifecycle.workspace_writers
    facts = memory.store.get_facts(plan.fact_ids)
    writable = {f.id for f in facts if memory.viewer.may_write(f.scope, writers)}
    if len(writable) == len(plan.fact_ids):
        return plan
    kept = [i for i in plan.fact_ids if i in writable]
    hits = [h for h in plan.hits if h.node != "fact" or h.id in writable]
    return dataclasses.replace(plan, fact_ids=kept, hits=hits, entity_names=[])


def forget_out(report: ForgetReport) -> ForgetOut:
    names = ("events", "facts", "archives", "entities", "keyword_docs", "embeddings",
             "jobs_deleted", "messages", "summaries")  # fmt: skip
    remain = report.bytes_remain
    note = COMPACT_HINT.format(files=", ".join(remain)) if remain else ""
    counts = {name: int(getattr(report, name)) for name in names}
    return ForgetOut(deleted=report.total, counts=counts, bytes_remain=remain, note=note)
