"""Request and response models of the HTTP API: the OpenAPI document and the client."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shiyi.memory.lifecycle.health import MemoryHealth as MemoryHealthDetail
from shiyi.memory.models import EventRecord, FactKind, FactRecord, MemoryHit, Scope
from shiyi.sessions.log import LoggedMessage, RunRecord, SessionInfo


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str


class SessionCreate(_In):
    title: str = Field(default="", max_length=200)


class SessionOut(BaseModel):
    id: str
    title: str
    created_at: float
    updated_at: float
    workspace: str
    message_count: int

    @classmethod
    def of(cls, info: SessionInfo) -> SessionOut:
        return cls(
            id=info.id,
            title=info.title,
            created_at=info.created_at,
            updated_at=info.updated_at,
            workspace=info.workspace,
            message_count=info.message_count,
        )


class SessionList(BaseModel):
    sessions: list[SessionOut]


class ToolCallOut(BaseModel):
    id: str
    name: str
    arguments: str


class MessageOut(BaseModel):
    id: int
    role: str
    content: str
    run_id: str | None
    iteration: int
    created_at: float
    tool_calls: list[ToolCallOut] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    @classmethod
    def of(cls, logged: LoggedMessage) -> MessageOut:
        message = logged.message
        return cls(
            id=logged.id,
            role=message.role,
            content=message.content,
            run_id=logged.run_id,
            iteration=logged.iteration,
            created_at=logged.created_at,
            tool_calls=[
                ToolCallOut(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls
            ],
            tool_call_id=message.tool_call_id,
            name=message.name,
        )


class RunOut(BaseModel):
    run_id: str
    session_id: str
    status: str
    active: bool = False
    goal: str = ""
    iterations: int = 0
    detail: str = ""

    @classmethod
    def of(cls, record: RunRecord) -> RunOut:
        return cls(
            run_id=record.id,
            session_id=record.session_id,
            status=record.status,
            goal=record.goal,
            iterations=record.iterations,
            detail=record.detail,
        )


class SessionDetail(SessionOut):
    messages: list[MessageOut]
    runs: list[RunOut]


class MessageIn(_In):
    text: str = Field(min_length=1, max_length=200_000)
    run_id: str | None = Field(
        default=None,
        max_length=100,
        description=(
            "An active run to join; an ended run to continue (a new run seeded with what "
            "memory holds about it); any other id names the new run."
        ),
    )


class RunResult(BaseModel):
    """The non-streaming form of a run: every event, the final status and the reply text."""

    events: list[dict[str, Any]]
    status: str | None = Field(
        description="The run's end status; null when the message joined a run."
    )
    text: str


class MemoryHitOut(BaseModel):
    id: str
    node: Literal["event", "fact"]
    text: str
    ts: float
    score: float
    anchor: str | None = None
    fact_kind: FactKind | None = None
    confidence: float = 1.0
    entities: list[str] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list, description="Recall paths that found it.")

    @classmethod
    def of(cls, hit: MemoryHit) -> MemoryHitOut:
        return cls(
            id=hit.id,
            node=hit.node,
            text=hit.text,
            ts=hit.ts,
            score=hit.score,
            anchor=hit.anchor.key() if hit.anchor else None,
            fact_kind=hit.fact_kind,
            confidence=hit.confidence,
            entities=list(hit.entities),
            paths=list(hit.paths),
        )


class MemoryHits(BaseModel):
    hits: list[MemoryHitOut]


class EventOut(BaseModel):
    node: Literal["event"] = "event"
    id: str
    session_id: str
    run_id: str
    ts: float
    role: str
    content: str
    segment_type: str
    iteration: int
    segment: int

    @classmethod
    def of(cls, event: EventRecord) -> EventOut:
        return cls.model_validate(event, from_attributes=True)


class FactOut(BaseModel):
    node: Literal["fact"] = "fact"
    id: str
    key: str
    value: str
    kind: FactKind
    confidence: float
    status: str
    tier: str
    created_at: float
    updated_at: float

    @classmethod
    def of(cls, fact: FactRecord) -> FactOut:
        return cls.model_validate(fact, from_attributes=True)


class MemoryEvents(BaseModel):
    events: list[EventOut]


class FactIn(_In):
    text: str = Field(min_length=1, max_length=100_000)
    kind: FactKind = "semantic"


class FactPatch(_In):
    value: str | None = Field(default=None, min_length=1, max_length=100_000)
    kind: FactKind | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)


class MemoryHealth(BaseModel):
    enabled: bool
    counts: dict[str, int]
    sessions: int
    active_runs: int
    detail: MemoryHealthDetail | None = None
    """Facts by kind/tier/scope/status, conflicts, vectors and jobs (``shiyi memory health``)."""


# --- the memory page (/v1/memory/facts, entities, timeline, conflicts, expired) ----------


class FactDetail(FactOut):
    """A fact as the memory page shows it: scope, owner, tags (its entities) and provenance."""

    scope: Scope
    user_id: str
    agent_id: str
    workspace_id: str
    entities: list[str] = Field(description="Entities the fact is ABOUT: the page's tags.")
    source_events: list[str] = Field(description="Event ids the fact was DERIVED_FROM.")
    evidence_count: int
    anchor: str = Field(description="run:iteration:segment of the turn it was learned from.")
    source: str
    valid_from: float | None
    valid_to: float | None
    expires_at: float | None
    conflicts_with: str
    access_count: int
    trigger: str
    steps: list[str]

    @classmethod
    def of(cls, fact: FactRecord) -> FactDetail:
        return cls.model_validate(fact, from_attributes=True)


class FactPage(BaseModel):
    facts: list[FactDetail]
    total: int = Field(description="How many facts match the filters (before limit/offset).")
    limit: int
    offset: int
    complete: bool = Field(
        description="False when more facts are stored than one listing scans (newest first)."
    )


class MemoryOverview(BaseModel):
    """The health panel, counted over what this server's viewer may see."""

    total: int = Field(description="Current facts (active and pending).")
    by_kind: dict[str, int]
    by_scope: dict[str, int]
    average_confidence: float | None = Field(description="Over active facts; null if none.")
    expired: int
    conflicts: int
    pending: int
    superseded: int


class EntityOut(BaseModel):
    name: str
    type: str
    display: str
    aliases: list[str]


class NeighbourOut(BaseModel):
    name: str
    relation: str
    direction: Literal["out", "in"] = Field(
        description="out: this entity -[relation]-> name; in: name -[relation]-> this entity."
    )
    weight: float


class EntityView(BaseModel):
    entity: EntityOut
    facts: list[FactDetail]
    neighbours: list[NeighbourOut]
    events: list[EventOut]


class TimelineEvent(EventOut):
    anchor: str


class SessionTimeline(BaseModel):
    session_id: str
    title: str
    events: list[TimelineEvent] = Field(description="The session's turns, oldest first.")
    facts: list[FactDetail] = Field(description="Facts derived from these turns.")


class ConflictOut(BaseModel):
    pending: FactDetail = Field(description="The newer, unconfirmed version.")
    current: FactDetail | None = Field(description="The active fact it contradicts.")


class ConflictList(BaseModel):
    conflicts: list[ConflictOut]


class ConflictResolve(_In):
    keep: Literal["new", "old"] = Field(
        description="new: the pending fact becomes active and supersedes the old one; "
        "old: the pending fact is deleted."
    )


class ConflictResolution(BaseModel):
    kept: FactDetail
    superseded: str | None = None
    deleted: str | None = None


class ExpiredList(BaseModel):
    facts: list[FactDetail]


class CleanupIn(_In):
    ids: list[str] | None = Field(
        default=None, max_length=10_000, description="Expired facts to delete; all if omitted."
    )


class CleanupResult(BaseModel):
    deleted: list[str]
    skipped: list[str] = Field(description="Ids that are not visible expired facts.")
