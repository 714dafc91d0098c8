"""``/v1/memory``: search, read, edit (facts only) and forget long-term memories."""

from __future__ import annotations

import dataclasses
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response

from shiyi.interfaces.server.deps import get_service
from shiyi.interfaces.server.schemas import (
    EventOut,
    FactOut,
    FactPatch,
    MemoryHealth,
    MemoryHitOut,
    MemoryHits,
)
from shiyi.interfaces.server.service import AgentService, Conflict, NotFound
from shiyi.memory.models import FactKind
from shiyi.memory.retriever import Mode
from shiyi.memory.service import Memory

router = APIRouter(prefix="/v1/memory", tags=["memory"])
Service = Annotated[AgentService, Depends(get_service)]
MemoryId = Annotated[str, "an event or fact id"]


def _memory(service: AgentService) -> Memory:
    if service.memory is None:
        raise Conflict("memory is disabled (memory.enabled is false in the server's settings)")
    return service.memory


@router.get("/search", response_model=MemoryHits)
async def search(
    service: Service,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    mode: Mode = "hybrid",
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    kind: Annotated[list[FactKind] | None, Query()] = None,
) -> MemoryHits:
    hits = _memory(service).search(q, mode=mode, kinds=kind, limit=limit)
    return MemoryHits(hits=[MemoryHitOut.of(hit) for hit in hits])


@router.get("/health", response_model=MemoryHealth)
async def health(service: Service) -> MemoryHealth:
    memory = service.memory
    return MemoryHealth(
        enabled=memory is not None,
        counts=memory.stats() if memory is not None else {},
        sessions=len(service.log.list_sessions(limit=1_000_000)),
        active_runs=len(service.active_run_ids()),
    )


@router.get("/{memory_id}", response_model=EventOut | FactOut)
async def get_memory(service: Service, memory_id: MemoryId) -> EventOut | FactOut:
    memory = _memory(service)
    events = memory.store.get_events([memory_id])
    if events:
        return EventOut.of(events[0])
    facts = memory.store.get_facts([memory_id])
    if facts:
        return FactOut.of(facts[0])
    raise NotFound(f"no memory {memory_id!r}; /v1/memory/search shows ids")


@router.patch("/{memory_id}", response_model=FactOut)
async def patch_memory(service: Service, memory_id: MemoryId, patch: FactPatch) -> FactOut:
    memory = _memory(service)
    facts = memory.store.get_facts([memory_id])
    if not facts:
        if memory.store.get_events([memory_id]):
            raise Conflict(f"{memory_id} is an event: events are read-only, only facts change")
        raise NotFound(f"no memory {memory_id!r}")
    changes = patch.model_dump(exclude_none=True)
    fact = dataclasses.replace(facts[0], **changes, updated_at=time.time())
    memory.store.upsert_facts([fact])
    if "value" in changes and memory.embedder is not None:
        from shiyi.memory.worker import EMBED

        memory.jobs.enqueue(EMBED, {"node": "fact", "ids": [fact.id]})
        memory.worker.wake()
    return FactOut.of(fact)


@router.delete("/{memory_id}", status_code=204, response_class=Response)
async def delete_memory(service: Service, memory_id: MemoryId) -> Response:
    if _memory(service).forget([memory_id]) == 0:
        raise NotFound(f"no memory {memory_id!r}")
    return Response(status_code=204)
