"""How ``shiyi memory`` prints memory's answers (the wire models every adapter returns)."""

from __future__ import annotations

import time

from shiyi.api.schemas import FactDetail, ForgetOut, MemoryHealthDetail, MemoryHitOut
from shiyi.memory.lifecycle.health import MemoryHealth


def hit_line(hit: MemoryHitOut) -> str:
    from shiyi.memory.recall.present import age_text

    kind = hit.fact_kind or hit.segment_type or hit.node
    where = f" [{hit.anchor}]" if hit.anchor else ""
    text = " ".join(hit.text.split())
    text = text if len(text) <= 110 else text[:109] + "…"
    age = age_text(hit.ts, time.time())
    state = f" [{hit.status}]" if hit.node == "fact" and hit.status != "active" else ""
    paths = ",".join(hit.paths) + (f"; +{len(hit.joined)} of its burst" if hit.joined else "")
    return f"{hit.score:.4f}  {hit.id:<20} {kind:<12} {age:>9}  {text}{state}{where}  ({paths})"


def fact_line(fact: FactDetail) -> str:
    """``shiyi memory list``: id, kind, status, scope, when it last changed, the text."""
    from shiyi.memory.recall.present import age_text

    text = f"{fact.key}: {fact.value}" if fact.key else fact.value
    text = " ".join(text.split())
    text = text if len(text) <= 100 else text[:99] + "…"
    age = age_text(fact.updated_at, time.time())
    return f"{fact.id:<20} {fact.kind:<11} {fact.status:<10} {fact.scope:<9} {age:>9}  {text}"


def history_line(fact: FactDetail) -> str:
    """One version of a fact slot: when it held, its status, its text."""
    since = _day(fact.valid_from or fact.created_at)
    until = _day(fact.valid_to) if fact.valid_to else "now"
    whose = f" ({', '.join(fact.subject)})" if fact.subject else ""  # not the user's own
    text = f"{fact.key}{whose}: {fact.value}" if fact.key else fact.value
    return f"{since} → {until:<10}  {fact.status:<10}  {text}  ({fact.id})"


def _day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


def forget_lines(done: ForgetOut) -> list[str]:
    """What each store lost (the counts a forget reports), then how to compact if needed."""
    n = done.counts.get
    rows = [
        ("graph", f"{n('events', 0)} events, {n('facts', 0)} facts, {n('entities', 0)} "
                  f"entities, {n('graph_sessions', 0)} sessions"),
        ("keyword index", f"{n('keyword_docs', 0)} documents"),
        ("embedding cache", f"{n('embeddings', 0)} vectors"),
        ("job queue", f"{n('jobs_edited', 0)} jobs edited, {n('jobs_deleted', 0)} deleted"),
        ("session log", f"{n('messages', 0)} messages, {n('log_sessions', 0)} sessions"),
        ("run files", f"{n('run_files', 0)} rewritten"),
        ("summaries", f"{n('summaries', 0)} cached summaries"),
    ]  # fmt: skip
    if n("compacted", 0):
        rows.append(("graph file", "rewritten without the deleted records"))
    if n("archives", 0):
        rows.append(("run archives", f"{n('archives', 0)} quoting forgotten messages"))
    lines = [f"  {name:<16} {text}" for name, text in rows]
    if done.note:  # a running service cannot compact while it serves: say how to
        lines.append(f"  note: {done.note}")
    return lines


def health_report(detail: MemoryHealthDetail) -> MemoryHealth:
    """The wire's numbers as the report :func:`health_lines` prints."""
    from shiyi.index.cache_stats import CacheRate

    fields = detail.model_dump()
    caches = [CacheRate(**rate) for rate in fields.pop("caches", [])]
    return MemoryHealth(**fields, caches=caches)


def counts(detail: MemoryHealthDetail) -> dict[str, int]:
    """``shiyi memory stats``: the store's counts (vectors and the queue: the owner's)."""
    found = {
        "events": detail.events,
        "facts": detail.facts,
        "entities": detail.entities,
        "relations": detail.relations,
        "sessions": detail.sessions,
    }
    found |= {f"embedded_{node}": n for node, n in detail.embedded.items()}
    return found | {"keyword_docs": detail.keyword_docs, "pending_jobs": detail.jobs_pending}
