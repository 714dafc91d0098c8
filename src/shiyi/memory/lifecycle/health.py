"""Memory health: what is stored, in what state, and what the background queue still owes.

``shiyi memory health`` prints it for the whole store (it reads the files); ``GET
/v1/memory/health`` returns what the caller may read (:func:`collect_visible_health`), and
the store-wide queue, index and cache numbers to the server's own identity only.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from shiyi.index.cache_stats import CacheRate, rate_text, snapshot
from shiyi.memory.jobs import JobQueue
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer


@dataclass(slots=True)
class MemoryHealth:
    facts: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    by_tier: dict[str, int] = field(default_factory=dict)
    by_scope: dict[str, int] = field(default_factory=dict)
    by_status: dict[str, int] = field(default_factory=dict)
    active_confidence: float | None = None
    """Average confidence of active facts (None when there are none)."""
    expired: int = 0
    pending: int = 0
    """Facts waiting for confirmation (extraction confidence 0.55-0.75, or a conflict)."""
    open_conflicts: int = 0
    events: int = 0
    entities: int = 0
    relations: int = 0
    sessions: int = 0
    embedded: dict[str, int] = field(default_factory=dict)
    """Vectors stored per node kind: events, facts, entities."""
    keyword_docs: int = 0
    jobs_pending: int = 0
    """Queued or running background jobs."""
    jobs_failed: int = 0
    caches: list[CacheRate] = field(default_factory=list)
    """Hits and misses of this process's caches since it started."""


def collect_health(store: MemoryStore, jobs: JobQueue) -> MemoryHealth:
    counts = store.counts()
    health = MemoryHealth(
        open_conflicts=store.open_conflicts(),
        events=counts.get("events", 0),
        entities=counts.get("entities", 0),
        relations=counts.get("relations", 0),
        sessions=counts.get("sessions", 0),
        embedded={
            node: counts.get(f"embedded_{node}", 0) for node in ("events", "facts", "entities")
        },
        keyword_docs=counts.get("keyword_docs", 0),
        jobs_pending=jobs.pending_count(),
        jobs_failed=sum(row.count for row in jobs.summary() if row.status == "failed"),
    )
    _add_fact_groups(health, store.fact_groups())
    health.caches = snapshot()
    return health


def collect_visible_health(store: MemoryStore, viewer: Viewer, legacy: bool) -> MemoryHealth:
    """Counts of what ``viewer`` may read (``legacy``: it is the configured identity, which
    sees relations stored before they had owners); store-wide numbers stay 0."""
    seen = store.visible_counts(viewer, legacy)
    health = MemoryHealth(
        open_conflicts=seen.open_conflicts,
        events=seen.events,
        entities=seen.entities,
        relations=seen.relations,
    )
    _add_fact_groups(health, seen.fact_groups)
    return health


def add_store_wide(health: MemoryHealth, store: MemoryStore, jobs: JobQueue) -> None:
    """The operator's numbers: vectors, keyword documents, the job queue, this process's
    caches (they grow with every user's activity)."""
    counts = store.counts()
    health.embedded = {
        node: counts.get(f"embedded_{node}", 0) for node in ("events", "facts", "entities")
    }
    health.keyword_docs = counts.get("keyword_docs", 0)
    health.jobs_pending = jobs.pending_count()
    health.jobs_failed = sum(row.count for row in jobs.summary() if row.status == "failed")
    health.caches = snapshot()


def _add_fact_groups(
    health: MemoryHealth, groups: list[tuple[str, str, str, str, int, float]]
) -> None:
    kinds: Counter[str] = Counter()
    tiers: Counter[str] = Counter()
    scopes: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    confidence_sum = 0.0
    for kind, tier, scope, status, count, avg_confidence in groups:
        kinds[kind] += count
        tiers[tier] += count
        scopes[scope] += count
        statuses[status] += count
        if status == "active":
            confidence_sum += avg_confidence * count
    health.facts = sum(statuses.values())
    health.by_kind, health.by_tier = dict(sorted(kinds.items())), dict(sorted(tiers.items()))
    health.by_scope, health.by_status = dict(sorted(scopes.items())), dict(sorted(statuses.items()))
    active = statuses["active"]
    health.active_confidence = round(confidence_sum / active, 4) if active else None
    health.expired, health.pending = statuses["expired"], statuses["pending"]


def health_lines(health: MemoryHealth) -> list[str]:
    """A two-column table for the terminal."""
    confidence = "-" if health.active_confidence is None else f"{health.active_confidence:.2f}"
    rows = [
        ("facts", str(health.facts)),
        ("  by kind", _spread(health.by_kind)),
        ("  by tier", _spread(health.by_tier)),
        ("  by scope", _spread(health.by_scope)),
        ("  by status", _spread(health.by_status)),
        ("  active confidence", confidence),
        ("  expired", str(health.expired)),
        ("  pending", str(health.pending)),
        ("  open conflicts", str(health.open_conflicts)),
        ("events", str(health.events)),
        ("entities", str(health.entities)),
        ("relations", str(health.relations)),
        ("sessions", str(health.sessions)),
        ("embedded", _spread(health.embedded)),
        ("keyword docs", str(health.keyword_docs)),
        ("jobs pending", str(health.jobs_pending)),
        ("jobs failed", str(health.jobs_failed)),
    ]
    rows += [(f"cache {rate.name}", rate_text(rate)) for rate in health.caches]
    return [f"{name:<20} {value}" for name, value in rows]


def _spread(counts: dict[str, int]) -> str:
    return "  ".join(f"{name} {count}" for name, count in counts.items()) or "-"
