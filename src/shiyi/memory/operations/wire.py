"""Memory's records turned into the wire models of :mod:`shiyi.api.schemas`.

The wire models know nothing of the stores; memory's operations
(:mod:`shiyi.memory.operations.local`) and the server's routes answer in
them, so the local and remote adapters return the same types.
"""

from __future__ import annotations

from shiyi.api.schemas import (
    EventOut,
    FactDetail,
    FactOut,
    ForgetOut,
    MemoryHealthDetail,
    MemoryHitOut,
    RememberedOut,
    ReplacedFact,
)
from shiyi.memory.lifecycle.explicit import Remembered
from shiyi.memory.lifecycle.forget_report import COMPACT_HINT, ForgetReport
from shiyi.memory.lifecycle.health import MemoryHealth
from shiyi.memory.models import EventRecord, FactRecord, MemoryHit


def hit_out(hit: MemoryHit) -> MemoryHitOut:
    return MemoryHitOut(
        id=hit.id,
        node=hit.node,
        text=hit.text,
        ts=hit.ts,
        score=hit.score,
        anchor=hit.anchor.key() if hit.anchor else None,
        segment_type=hit.anchor.segment_type if hit.anchor else None,
        fact_kind=hit.fact_kind,
        status=hit.status,
        confidence=hit.confidence,
        entities=list(hit.entities),
        paths=list(hit.paths),
        joined=list(hit.joined),
    )


def event_out(event: EventRecord) -> EventOut:
    return EventOut.model_validate(event, from_attributes=True)


def fact_out(fact: FactRecord) -> FactOut:
    return FactOut.model_validate(fact, from_attributes=True)


def remembered_out(remembered: Remembered) -> RememberedOut:
    replaced = [ReplacedFact(id=f.id, key=f.key, value=f.value) for f in remembered.replaced]
    fact = fact_out(remembered.fact).model_dump()
    return RememberedOut(**fact, outcome=remembered.outcome, replaces=replaced)


def fact_detail(fact: FactRecord) -> FactDetail:
    return FactDetail.model_validate(fact, from_attributes=True)


def health_detail(health: MemoryHealth) -> MemoryHealthDetail:
    return MemoryHealthDetail.model_validate(health, from_attributes=True)


def forget_out(report: ForgetReport) -> ForgetOut:
    names = ("events", "facts", "archives", "entities", "graph_sessions", "keyword_docs",
             "embeddings", "jobs_edited", "jobs_deleted", "messages", "log_sessions",
             "summaries", "run_files", "compacted")  # fmt: skip
    remain = report.bytes_remain
    note = COMPACT_HINT.format(files=", ".join(remain)) if remain else ""
    counts = {name: int(getattr(report, name)) for name in names}
    return ForgetOut(deleted=report.total, counts=counts, bytes_remain=remain, note=note)
