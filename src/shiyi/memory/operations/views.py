"""What the memory page asks of the memory: filtered fact lists, an entity's surroundings,
a session's timeline, expired facts and open conflicts, all through the memory's viewer.

Blocking (store calls): the memory page's routes
(:mod:`shiyi.interfaces.server.memory_page_routes`) run these in a worker thread.
The store has no filtered fact query, so a listing scans the newest ``SCAN_LIMIT`` facts of
the wanted statuses and filters them here; ``complete`` says whether that saw them all.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from shiyi.errors import Conflict, NotFound
from shiyi.memory.models import (
    EntityRecord,
    EventRecord,
    FactRecord,
    RelationRecord,
    as_read_at,
)
from shiyi.memory.service import Memory
from shiyi.memory.text.entities import normalize_name

SCAN_LIMIT = 5000
CURRENT = ("active", "pending")
STATUSES = ("active", "pending", "superseded", "expired")


@dataclass(slots=True)
class FactFilter:
    kinds: Sequence[str] = ()
    scopes: Sequence[str] = ()
    statuses: Sequence[str] = ()
    """Empty: current facts (active, pending); with ``ids``: any status."""
    tiers: Sequence[str] = ()
    text: str = ""
    """Case-insensitive substring of the key, value, trigger, steps or a tag."""
    entity: str = ""
    since: float | None = None
    until: float | None = None
    """Bounds on ``created_at`` (seconds since the epoch, inclusive)."""
    ids: Sequence[str] = ()
    sources: Sequence[str] = ()
    """Only these sources (explicit, extraction, consolidation, archive, import)."""
    not_sources: Sequence[str] = ()

    def matches(self, fact: FactRecord) -> bool:
        checks = (
            (self.kinds, fact.kind),
            (self.scopes, fact.scope),
            (self.statuses or (() if self.ids else CURRENT), fact.status),
            (self.tiers, fact.tier),
        )
        if any(wanted and value not in wanted for wanted, value in checks):
            return False
        if (self.sources and fact.source not in self.sources) or fact.source in self.not_sources:
            return False
        if self.since is not None and fact.created_at < self.since:
            return False
        if self.until is not None and fact.created_at > self.until:
            return False
        if self.entity and normalize_name(self.entity) not in fact.entities:
            return False
        return not self.text or self.text.casefold() in _haystack(fact)


def _haystack(fact: FactRecord) -> str:
    return " ".join([fact.key, fact.value, fact.trigger, *fact.steps, *fact.entities]).casefold()


@dataclass(slots=True)
class FactListing:
    facts: list[FactRecord]
    total: int
    complete: bool


def visible_facts(memory: Memory, ids: Sequence[str]) -> list[FactRecord]:
    now = time.time()  # past its TTL it reads as expired, swept or not
    return [as_read_at(f, now) for f in memory.store.get_facts(ids) if memory.viewer.sees_fact(f)]


def list_facts(memory: Memory, wanted: FactFilter, limit: int, offset: int) -> FactListing:
    """Matching facts, newest change first (or in the order of ``wanted.ids``)."""
    if wanted.ids:
        scanned, complete = list(dict.fromkeys(wanted.ids)), True
    else:
        statuses = list(wanted.statuses or CURRENT)
        scanned = memory.store.facts_by_status(statuses, SCAN_LIMIT + 1)
        complete = len(scanned) <= SCAN_LIMIT
        scanned = scanned[:SCAN_LIMIT]
    matching = [f for f in visible_facts(memory, scanned) if wanted.matches(f)]
    return FactListing(matching[offset : offset + limit], len(matching), complete)


@dataclass(slots=True)
class Overview:
    total: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    by_scope: dict[str, int] = field(default_factory=dict)
    average_confidence: float | None = None
    expired: int = 0
    conflicts: int = 0
    pending: int = 0
    superseded: int = 0


def overview(memory: Memory) -> Overview:
    facts = visible_facts(memory, memory.store.facts_by_status(STATUSES, SCAN_LIMIT))
    current = [f for f in facts if f.status in CURRENT]
    active = [f.confidence for f in facts if f.status == "active"]
    statuses = Counter(f.status for f in facts)
    return Overview(
        total=len(current),
        by_kind=dict(sorted(Counter(f.kind for f in current).items())),
        by_scope=dict(sorted(Counter(f.scope for f in current).items())),
        average_confidence=round(sum(active) / len(active), 4) if active else None,
        expired=statuses["expired"],
        conflicts=sum(1 for f in facts if f.status == "pending" and f.conflicts_with),
        pending=statuses["pending"],
        superseded=statuses["superseded"],
    )


# --- an entity -----------------------------------------------------------------------------


@dataclass(slots=True)
class Neighbour:
    name: str
    relation: str
    direction: Literal["out", "in"]
    weight: float


@dataclass(slots=True)
class EntitySurroundings:
    entity: EntityRecord
    facts: list[FactRecord]
    neighbours: list[Neighbour]
    events: list[EventRecord]


def entity_view(memory: Memory, name: str, limit: int) -> EntitySurroundings | None:
    """The entity (by name or alias), the visible facts about it and events mentioning it
    (newest first), and its RELATED_TO neighbours: all only through what the viewer may read
    (issue 29).  Entity nodes are shared by every user (one node per name), so an entity no
    visible turn, fact or own relation names is None, exactly as a name never stored; its
    aliases and display spelling show only as the viewer's own records spell them, and a
    lookup by an alias the viewer never used finds nothing."""
    found = memory.store.find_entities([name])
    if not found:
        return None
    key = normalize_name(name)
    entity = next((e for e in found if e.name == key), found[0])
    around = memory.store.neighbourhood([entity.name], 1, limit, follows=memory.follows())
    facts = visible_facts(memory, [s.id for s in around.fact_ids])
    events = memory.store.get_events([s.id for s in around.event_ids])
    seen = [e for e in events if memory.viewer.sees(e)]
    if not (facts or seen or around.relations):
        return None  # only other users speak of it: its very name is theirs
    spoken = _spoken(facts, seen)
    if key != entity.name and key not in spoken:
        return None  # found by an alias only another user's records use
    shown = EntityRecord(
        name=entity.name,
        type=entity.type,
        display=entity.display if normalize_name(entity.display) in spoken else entity.name,
        aliases=[a for a in entity.aliases if normalize_name(a) in spoken],
    )
    return EntitySurroundings(shown, facts, _neighbours(entity.name, around.relations), seen)


def _spoken(facts: Sequence[FactRecord], events: Sequence[EventRecord]) -> str:
    """The visible records' words, normalised like names, for "was this spelling said"."""
    texts = [e.content for e in events] + [f.text for f in facts]
    texts += [name for f in facts for name in f.entities]
    return "\n".join(normalize_name(text) for text in texts)


def _neighbours(name: str, relations: Sequence[RelationRecord]) -> list[Neighbour]:
    seen: dict[tuple[str, str, str], Neighbour] = {}
    for rel in relations:
        if rel.valid_to is not None and rel.valid_to <= time.time():
            continue
        outgoing = rel.src == name
        other = rel.dst if outgoing else rel.src
        if other == name:
            continue
        direction: Literal["out", "in"] = "out" if outgoing else "in"
        seen.setdefault(
            (other, rel.type, direction), Neighbour(other, rel.type, direction, rel.weight)
        )
    return sorted(seen.values(), key=lambda n: (-n.weight, n.name, n.relation))


# --- a session -----------------------------------------------------------------------------


def timeline(
    memory: Memory, session_id: str, limit: int
) -> tuple[list[EventRecord], list[FactRecord]]:
    """The session's visible events in conversation order and the facts derived from them."""
    newest = memory.store.recent_events(limit, session_id)
    events = sorted(
        (e for e in newest if memory.viewer.sees(e)), key=lambda e: (e.ts, e.iteration, e.segment)
    )
    derived = memory.store.facts_derived_from([e.id for e in events]) if events else []
    facts = visible_facts(memory, derived)
    return events, sorted(facts, key=lambda f: f.created_at)


# --- expired facts -------------------------------------------------------------------------


def expired(memory: Memory) -> list[FactRecord]:
    return visible_facts(memory, memory.store.facts_by_status(["expired"], SCAN_LIMIT))


def cleanup(memory: Memory, ids: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """Hard-delete these (default: all) visible expired facts the viewer may write (shared
    ones only for ``workspace_writers``): (deleted, skipped ids)."""
    writers = memory.writers
    candidates = [f.id for f in expired(memory) if memory.viewer.may_write(f.scope, writers)]
    if ids is None:
        wanted, skipped = candidates, []
    else:
        allowed = set(candidates)
        wanted = [i for i in dict.fromkeys(ids) if i in allowed]
        skipped = [i for i in dict.fromkeys(ids) if i not in allowed]
    if wanted:
        memory.forget_ids(wanted)
    return wanted, skipped


# --- conflicts -----------------------------------------------------------------------------


def conflicts(memory: Memory) -> list[tuple[FactRecord, FactRecord | None]]:
    """Visible pending facts contradicting an active fact, each with that fact (if visible)."""
    pending = visible_facts(memory, memory.store.facts_by_status(["pending"], SCAN_LIMIT))
    open_ = [f for f in pending if f.conflicts_with]
    current = {f.id: f for f in visible_facts(memory, [f.conflicts_with for f in open_])}
    return [(f, current.get(f.conflicts_with)) for f in open_]


@dataclass(slots=True)
class Resolution:
    kept: FactRecord
    superseded: str | None = None
    deleted: str | None = None


def resolve(memory: Memory, pending_id: str, keep: str) -> Resolution:
    """Keep the new (pending) version — it becomes active and supersedes the old one, which
    keeps its history — or the old one, deleting the pending version."""
    found = visible_facts(memory, [pending_id])
    if not found:
        raise NotFound(f"no fact {pending_id!r}; /v1/memory/conflicts lists the open ones")
    new = found[0]
    if new.status != "pending" or not new.conflicts_with:
        raise Conflict(f"{pending_id} is not an open conflict (status {new.status})")
    olds = visible_facts(memory, [new.conflicts_with])
    old = olds[0] if olds else None
    writers = memory.writers
    for fact in (new, old):  # a shared fact: only for workspace_writers, like a PATCH
        if fact is not None:
            memory.viewer.check_write(fact.scope, writers)
    if keep == "old":
        if old is None:
            raise Conflict(f"the fact {new.conflicts_with} it contradicts no longer exists")
        memory.forget_ids([new.id])
        return Resolution(kept=old, deleted=new.id)
    now = time.time()
    threshold = memory.settings.lifecycle.active_threshold
    new.status, new.conflicts_with, new.updated_at = "active", "", now
    new.confidence = max(new.confidence, threshold)
    changed = [new]
    live_old = old is not None and old.status == "active"
    if old is not None and live_old:
        old.status, old.valid_to, old.updated_at = "superseded", new.valid_from or now, now
        changed.append(old)
    memory.store.upsert_facts(changed)
    if old is not None and live_old:
        memory.store.add_supersedes([(new.id, old.id)])
        return Resolution(kept=new, superseded=old.id)
    return Resolution(kept=new)
