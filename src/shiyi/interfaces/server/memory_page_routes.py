"""The memory page: its static files at ``/`` and ``/ui/``, and the ``/v1/memory`` routes it
needs beyond search/get/edit/delete (filtered lists, overview, entities, session timelines,
expired facts, conflicts).  Include this router before the memory router: its paths like
``/v1/memory/facts`` would otherwise be taken for a memory id."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Query
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from shiyi.api.schemas import (
    CleanupIn,
    CleanupResult,
    ConflictList,
    ConflictOut,
    ConflictResolution,
    ConflictResolve,
    EntityOut,
    EntityView,
    ExpiredList,
    FactPage,
    MemoryOverview,
    NeighbourOut,
    SessionTimeline,
    TimelineEvent,
)
from shiyi.errors import NotFound, SessionNotFound
from shiyi.interfaces.server.deps import get_service, require_memory
from shiyi.interfaces.server.identity import Caller
from shiyi.interfaces.server.service import AgentService
from shiyi.interfaces.server.wire import event_out, fact_detail
from shiyi.memory.models import FactKind, FactStatus, Scope, Tier
from shiyi.memory.operations import fact_views
from shiyi.memory.operations import views as page_views

STATIC = Path(__file__).with_name("static")
router = APIRouter(prefix="/v1/memory", tags=["memory page"])
Service = Annotated[AgentService, Depends(get_service)]


@router.get("/facts", response_model=FactPage)
async def list_facts(
    service: Service,
    who: Caller,
    kind: Annotated[list[FactKind] | None, Query()] = None,
    scope: Annotated[list[Scope] | None, Query()] = None,
    status: Annotated[
        list[FactStatus] | None, Query(description="Default: active and pending.")
    ] = None,
    tier: Annotated[list[Tier] | None, Query()] = None,
    q: Annotated[str, Query(max_length=500, description="Text the fact contains.")] = "",
    entity: Annotated[str, Query(max_length=200, description="A tag (entity name).")] = "",
    since: Annotated[float | None, Query(description="created_at >= (epoch seconds)")] = None,
    until: Annotated[float | None, Query(description="created_at <= (epoch seconds)")] = None,
    ids: Annotated[
        list[str] | None, Query(max_length=200, description="These facts, in this order.")
    ] = None,
    source: Annotated[
        list[str] | None,
        Query(description="Only facts from these sources (explicit, extraction, archive...)."),
    ] = None,
    not_source: Annotated[
        list[str] | None,
        Query(description="Leave out these sources (the page lists run archives apart)."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> FactPage:
    """Facts the server's viewer may see, newest change first, filtered."""
    wanted = page_views.FactFilter(
        kinds=kind or (),
        scopes=scope or (),
        statuses=status or (),
        tiers=tier or (),
        text=q.strip(),
        entity=entity.strip(),
        since=since,
        until=until,
        ids=ids or (),
        sources=source or (),
        not_sources=not_source or (),
    )
    memory = require_memory(service, who)
    found = await asyncio.to_thread(page_views.list_facts, memory, wanted, limit, offset)
    return FactPage(
        facts=await asyncio.to_thread(fact_views.shown, memory, found.facts),
        total=found.total,
        limit=limit,
        offset=offset,
        complete=found.complete,
    )


@router.get("/overview", response_model=MemoryOverview)
async def overview(service: Service, who: Caller) -> MemoryOverview:
    """The health panel: totals, average confidence, expired facts and open conflicts."""
    counted = await asyncio.to_thread(page_views.overview, require_memory(service, who))
    return MemoryOverview(
        total=counted.total,
        by_kind=counted.by_kind,
        by_scope=counted.by_scope,
        average_confidence=counted.average_confidence,
        expired=counted.expired,
        conflicts=counted.conflicts,
        pending=counted.pending,
        superseded=counted.superseded,
    )


@router.get("/entities/{name}", response_model=EntityView)
async def entity(
    service: Service, who: Caller, name: str, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> EntityView:
    """An entity (by name or alias) with its facts (current versions first; a superseded one
    says what replaced it), RELATED_TO neighbours and mentions."""
    memory = require_memory(service, who)
    found = await asyncio.to_thread(page_views.entity_view, memory, name, limit)
    if found is None:
        raise NotFound(f"no remembered entity is called {name!r}")
    record = found.entity
    return EntityView(
        entity=EntityOut(
            name=record.name, type=record.type, display=record.display, aliases=record.aliases
        ),
        facts=await asyncio.to_thread(
            fact_views.shown, memory, fact_views.current_first(found.facts)
        ),
        neighbours=[
            NeighbourOut(name=n.name, relation=n.relation, direction=n.direction, weight=n.weight)
            for n in found.neighbours
        ],
        events=[event_out(e) for e in found.events],
    )


@router.get("/sessions/{session_id}/timeline", response_model=SessionTimeline)
async def session_timeline(
    service: Service,
    who: Caller,
    session_id: str,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> SessionTimeline:
    """A session's remembered turns in order, with the facts derived from them (current
    versions first; a superseded one says what replaced it)."""
    memory = require_memory(service, who)
    events, facts = await asyncio.to_thread(page_views.timeline, memory, session_id, limit)
    title = ""
    try:
        title = service.log.get_session(session_id, owner=who.owner).title
    except SessionNotFound:
        if not events:  # deleted from the log but remembered; not theirs: no events either
            raise
    return SessionTimeline(
        session_id=session_id,
        title=title,
        events=[TimelineEvent(**event_out(e).model_dump(), anchor=e.anchor.key()) for e in events],
        facts=await asyncio.to_thread(fact_views.shown, memory, fact_views.current_first(facts)),
    )


@router.get("/expired", response_model=ExpiredList)
async def expired(service: Service, who: Caller) -> ExpiredList:
    facts = await asyncio.to_thread(page_views.expired, require_memory(service, who))
    return ExpiredList(facts=[fact_detail(f) for f in facts])


@router.post("/expired/cleanup", response_model=CleanupResult)
async def cleanup(service: Service, who: Caller, body: CleanupIn | None = None) -> CleanupResult:
    """Hard-delete expired facts (these ids, or all of them)."""
    ids = body.ids if body is not None else None
    memory = require_memory(service, who)
    deleted, skipped = await asyncio.to_thread(page_views.cleanup, memory, ids)
    return CleanupResult(deleted=deleted, skipped=skipped)


@router.get("/conflicts", response_model=ConflictList)
async def conflicts(service: Service, who: Caller) -> ConflictList:
    """Pending facts that contradict an active one, each beside the fact it contradicts."""
    pairs = await asyncio.to_thread(page_views.conflicts, require_memory(service, who))
    return ConflictList(
        conflicts=[
            ConflictOut(pending=fact_detail(new), current=fact_detail(old) if old else None)
            for new, old in pairs
        ]
    )


@router.post("/conflicts/{fact_id}/resolve", response_model=ConflictResolution)
async def resolve(
    service: Service, who: Caller, fact_id: str, body: ConflictResolve
) -> ConflictResolution:
    """Keep the new version (it supersedes the old one) or the old one (the new is deleted)."""
    done = await asyncio.to_thread(
        page_views.resolve, require_memory(service, who), fact_id, body.keep
    )
    return ConflictResolution(
        kept=fact_detail(done.kept), superseded=done.superseded, deleted=done.deleted
    )


PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: its own scripts and styles only (it has no inline
ones), no frames around it.  Memories are shown as text; should one ever reach the page as
markup, no script it carries runs and nothing it names is fetched from elsewhere."""


async def _index() -> FileResponse:
    return FileResponse(
        STATIC / "index.html",
        headers={
            "cache-control": "no-cache",
            "content-security-policy": PAGE_POLICY,
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
        },
    )


def install_page(app: FastAPI) -> None:
    """The page at ``/`` and its assets under ``/ui/`` (no token needed: they hold no data;
    the page asks for the token and sends it with every API call)."""
    app.add_api_route("/", _index, methods=["GET", "HEAD"], include_in_schema=False)
    app.mount("/ui", StaticFiles(directory=STATIC), name="ui")
