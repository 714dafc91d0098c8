"""The tools' readable text: what a model reads beside the structured content, with the
dates and speakers a memory is only useful with."""

from __future__ import annotations

import time
from collections.abc import Sequence

from shiyi.api.knowledge_schemas import KnowledgeHits
from shiyi.api.schemas import (
    EntitySummary,
    EventOut,
    FactDetail,
    FactOut,
    ForgetOut,
    ForgetPlanOut,
    MemoryHitOut,
    MemoryJobs,
    RememberedOut,
)
from shiyi.interfaces.mcp.fit import clipped


def when(ts: float | None) -> str:
    """UTC, to the minute: the same for every reader wherever the server runs."""
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts))


def hits(found: Sequence[MemoryHitOut], left_out: int = 0) -> str:
    if not found:
        return "No memories matched."
    lines = [hit_line(hit) for hit in found]
    if left_out:
        lines.append(
            f"({left_out} more hits left out to keep this answer under the client's size "
            "limit: ask for fewer, or read one whole with get_memory)"
        )
    return "\n".join(lines)


def hit_line(hit: MemoryHitOut) -> str:
    kind = hit.fact_kind or hit.segment_type or hit.node
    where = f", anchor {hit.anchor}" if hit.anchor else ""
    state = f", {hit.status}" if hit.node == "fact" and hit.status != "active" else ""
    return (
        f"- [{when(hit.ts)}] {clipped(hit.text, hit.id)}  ({hit.node} {hit.id}, "
        f"{kind}{state}{where}, score {hit.score:.3f})"
    )


def fact(record: FactOut | FactDetail, clip: bool = False) -> str:
    value = clipped(record.value, record.id) if clip else record.value
    text = f"{record.key}: {value}" if record.key else value
    return (
        f"{text}  (fact {record.id}, {record.kind}, {record.status}, confidence "
        f"{record.confidence:.2f}, created {when(record.created_at)}, updated "
        f"{when(record.updated_at)})"
    )


def remembered(record: RememberedOut) -> str:
    """What an add did to what memory believes: new, confirmed, or what it replaced."""
    if record.outcome == "confirmed":
        return f"Already remembered (confirmed; no copy made): {fact(record)}"
    told = f"Remembered: {fact(record)}"
    if record.replaces:
        replaced = "; ".join(f"{r.value!r} ({r.id})" for r in record.replaces)
        told += f"\nIt replaces {replaced}, kept in history."
    return told


def event(record: EventOut) -> str:
    anchor = f"{record.run_id}:{record.iteration}:{record.segment}"
    return (
        f"[{when(record.ts)}] {record.role}: {record.content}  (event {record.id}, anchor {anchor})"
    )


def facts(found: Sequence[FactDetail], total: int | None = None, offset: int = 0) -> str:
    if not found:
        return "No facts."
    lines = [fact_line(f) for f in found]
    if total is not None and total > offset + len(found):
        following = offset + len(found)
        lines.append(f"({len(found)} of {total} shown: the next start at offset={following})")
    return "\n".join(lines)


def fact_line(record: FactDetail) -> str:
    return f"- {fact(record, clip=True)}"


def history(found: Sequence[FactDetail]) -> str:
    if not found:
        return "No versions of that fact."
    lines = []
    for f in found:
        until = when(f.valid_to) if f.valid_to else "now"
        text = f"{f.key}: {f.value}" if f.key else f.value
        lines.append(
            f"- {when(f.valid_from or f.created_at)} → {until}: {text} ({f.status}, {f.id})"
        )
    return "\n".join(lines)


def events(found: Sequence[EventOut]) -> str:
    return "\n".join(event(e) for e in found) if found else "No remembered turns there."


def forgotten(done: ForgetOut) -> str:
    text = f"Deleted {done.deleted} memories."
    return f"{text} {done.note}" if done.note else text


def forget_plan(plan: ForgetPlanOut) -> str:
    listed = f"{plan.target}: {plan.events} events, {plan.facts} facts"
    if plan.forgotten is None:
        return f"Would forget {listed} (dry run):\n{hits(plan.hits)}"
    return f"Forgot {listed}. {forgotten(plan.forgotten)}"


def entities(found: Sequence[EntitySummary]) -> str:
    if not found:
        return "No entities."
    return "\n".join(f"- {e.name} ({e.facts} facts)" for e in found)


def jobs(queue: MemoryJobs) -> str:
    if not queue.summary:
        return "The queue is empty."
    lines = [f"- {row.kind} {row.status}: {row.count}" for row in queue.summary]
    lines.append(f"{queue.ready} due now or running.")
    lines += [f"- failed #{f.id} {f.kind}: {f.last_error}" for f in queue.failed]
    return "\n".join(lines)


def passages(found: KnowledgeHits) -> str:
    if not found.passages:
        return "No passages matched."
    return "\n\n".join(
        f"[{p.doc_path} › {p.heading_path}] (score {p.score:.3f})\n{p.text}" for p in found.passages
    )
