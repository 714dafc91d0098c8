"""The memory data model: events, entities, facts, relations, anchors and search hits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias

from shiyi.index.types import Scored as Scored  # memory code names it from here too

SegmentType: TypeAlias = Literal[
    "user_message", "reasoning", "tool_call", "tool_result", "response", "imported"
]
FactKind: TypeAlias = Literal[
    "preference", "semantic", "episodic", "procedural", "decision", "convention", "todo", "mood"
]
FACT_KINDS: tuple[FactKind, ...] = (
    "preference", "semantic", "episodic", "procedural", "decision", "convention", "todo", "mood"
)  # fmt: skip
Scope: TypeAlias = Literal["user", "agent", "workspace"]
FactStatus: TypeAlias = Literal["active", "pending", "superseded", "expired"]
Tier: TypeAlias = Literal["short", "long"]
NodeKind: TypeAlias = Literal["event", "fact", "entity"]
History: TypeAlias = bool | Literal["all"]
"""Which facts a search shows: current ones (False), superseded ones too (True: a question
about the past), or every stored fact, expired ones too ("all": what a forget must find)."""


def shown_statuses(history: History) -> tuple[FactStatus, ...]:
    """The fact statuses a search with ``history`` shows."""
    if history == "all":
        return ("active", "pending", "superseded", "expired")
    return ("active", "pending", "superseded") if history else ("active", "pending")


@dataclass(slots=True, frozen=True)
class Anchor:
    """Where a memory came from: a segment of one iteration of one run (seed 002)."""

    session_id: str
    run_id: str
    iteration: int
    segment: int
    segment_type: SegmentType
    ts: float

    def key(self) -> str:
        """A compact text form the model can pass back to ``expand``."""
        return f"{self.run_id}:{self.iteration}:{self.segment}"


@dataclass(slots=True)
class EventRecord:
    """One segment of a conversation: a message, a tool call or a tool result."""

    id: str
    session_id: str
    run_id: str
    ts: float
    role: str
    content: str
    segment_type: SegmentType
    iteration: int = 0
    segment: int = 0
    summary: str = ""
    user_id: str = "default"
    agent_id: str = "shiyi"
    derived: str = ""
    """Why this turn only repeats memory ("" if it does not): ``memory_tool`` (a memory
    tool's call or result), ``quotes_memory`` (a reply quoting memories shown to the model).
    Derived turns stay in the log and ``expand`` but are no evidence: recall and extraction
    pass them by (see :mod:`shiyi.memory.text.echoes`)."""

    @property
    def anchor(self) -> Anchor:
        return Anchor(
            self.session_id, self.run_id, self.iteration, self.segment, self.segment_type, self.ts
        )


@dataclass(slots=True)
class EntityRecord:
    """A thing the conversation mentions. ``name`` is the normalised key."""

    name: str
    type: str = "concept"
    display: str = ""
    aliases: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RelationRecord:
    src: str
    dst: str
    type: str
    weight: float = 1.0
    valid_from: float | None = None
    valid_to: float | None = None
    user_id: str = ""
    agent_id: str = ""
    """Whose conversation said it: a relation is private like the turns it came from (issue
    29: entities told one user what another's conversations named).  Empty: stored before
    relations had owners; only the configured identity sees those."""


RelationFilter: TypeAlias = Callable[[RelationRecord], bool]
"""Which relations a reader may see (see ``MemoryStore.neighbourhood``)."""


@dataclass(slots=True)
class VisibleCounts:
    """What one viewer may read, counted (see ``MemoryStore.visible_counts``)."""

    events: int = 0
    entities: int = 0
    """Entities a visible turn mentions, a visible fact is about or an own relation ties."""
    relations: int = 0
    fact_groups: list[tuple[str, str, str, str, int, float]] = field(default_factory=list)
    """(kind, tier, scope, status, count, average confidence) as ``fact_groups``."""
    open_conflicts: int = 0


@dataclass(slots=True)
class FactRecord:
    id: str
    key: str
    value: str
    kind: FactKind = "semantic"
    scope: Scope = "user"
    confidence: float = 1.0
    status: FactStatus = "active"
    tier: Tier = "short"
    created_at: float = 0.0
    updated_at: float = 0.0
    valid_from: float | None = None
    valid_to: float | None = None
    expires_at: float | None = None
    access_count: int = 0
    last_accessed: float | None = None
    user_id: str = "default"
    agent_id: str = "shiyi"
    workspace_id: str = "default"
    trigger: str = ""
    """Procedural memories: when the procedure applies."""
    steps: list[str] = field(default_factory=list)
    """Procedural memories: what to do, in order."""
    success_rate: float | None = None
    usage_count: int = 0
    evidence_count: int = 1
    """How many observations back this fact (a repeat confirms instead of duplicating)."""
    anchor: str = ""
    """``run:iteration:segment`` of the turn it was learned from, for ``expand``."""
    source: str = "explicit"
    """explicit (remember), extraction, consolidation, archive or import."""
    conflicts_with: str = ""
    """A pending fact that contradicts this active fact id (to be confirmed or dismissed)."""
    entities: list[str] = field(default_factory=list)
    """Normalised entity names this fact is ABOUT."""
    source_events: list[str] = field(default_factory=list)
    """Event ids this fact was DERIVED_FROM (the whole window the extraction read)."""
    said_at: float | None = None
    """When the value was last *said*: the time of the newest turn that stated it (not of
    the window an extraction read).  Versions of a slot are ordered by it: an older
    statement never supersedes a newer one.  None: stored before statements were dated
    (:func:`said_time` falls back to ``valid_from`` / ``created_at``)."""
    said_in: list[str] = field(default_factory=list)
    """Ids of the turns that stated it, each counted once as evidence: re-reading one of
    them (a later window, the session's consolidation) confirms nothing."""

    @property
    def text(self) -> str:
        base = f"{self.key}: {self.value}" if self.key else self.value
        if self.kind == "procedural" and (self.trigger or self.steps):
            when = f" (when: {self.trigger})" if self.trigger else ""
            steps = "; ".join(f"{i}. {step}" for i, step in enumerate(self.steps, start=1))
            return f"{base}{when}" + (f" steps: {steps}" if steps else "")
        return base


def said_time(fact: FactRecord) -> float:
    """When ``fact`` was last stated, for facts stored before ``said_at`` too."""
    if fact.said_at is not None:
        return fact.said_at
    return fact.valid_from if fact.valid_from is not None else fact.created_at


def as_read_at(fact: FactRecord, now: float) -> FactRecord:
    """``fact`` as a reader at ``now`` sees it: a short-term fact past ``expires_at`` is
    expired even before the periodic sweep marks it so in the store (it ran every 60 s, and
    until then expired facts were still recalled)."""
    current = fact.status in ("active", "pending")
    if current and fact.expires_at is not None and fact.expires_at <= now:
        return replace(fact, status="expired")
    return fact


@dataclass(slots=True)
class MemoryHit:
    """One retrieved memory, fused and reranked, ready to show or to format for the model."""

    id: str
    node: Literal["event", "fact"]
    text: str
    ts: float
    score: float = 0.0
    anchor: Anchor | None = None
    fact_kind: FactKind | None = None
    confidence: float = 1.0
    access_count: int = 0
    paths: dict[str, int] = field(default_factory=dict)
    """Recall path name -> rank (1-based) at which that path found this memory."""
    entities: list[str] = field(default_factory=list)
    status: FactStatus = "active"
    tier: Tier = "long"
    scope: Scope = "user"
    valid_to: float | None = None
    source: str = ""
    """A fact's source (``archive`` for a run archive); "" for events."""
    joined: list[str] = field(default_factory=list)
    """Ids of the other messages of this event's burst shown with it (one speaker's pieces
    in a row, :mod:`~shiyi.memory.recall.burst_hits`); ``text`` holds them all, in order."""


@dataclass(slots=True, frozen=True)
class Neighbourhood:
    """What the graph path found around the query's entities (up to two hops)."""

    entities: list[str]
    event_ids: list[Scored]
    fact_ids: list[Scored]
    relations: list[RelationRecord]
