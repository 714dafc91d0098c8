"""Request and response models of the HTTP API: the OpenAPI document and the client.

Wire protocol only: the server converts its records to these (:mod:`shiyi.interfaces.server.wire`),
so :mod:`shiyi.client` imports no storage module.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

# The wire's own copies of memory's names (a test keeps them equal): the client must not
# import the storage modules that define them.
FactKind: TypeAlias = Literal[
    "preference", "semantic", "episodic", "procedural", "decision", "convention", "todo", "mood"
]
Scope: TypeAlias = Literal["user", "agent", "workspace"]


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


class RunOut(BaseModel):
    run_id: str
    session_id: str
    status: str
    active: bool = False
    goal: str = ""
    iterations: int = 0
    detail: str = ""


class SessionDetail(SessionOut):
    messages: list[MessageOut]
    runs: list[RunOut]


class MessageIn(_In):
    text: str = Field(min_length=1, max_length=200_000, pattern=r"\S")
    run_id: str | None = Field(
        default=None,
        max_length=100,
        # ':' and '~' are the import namespace (`<session>:<run>`, the importer's tag): a
        # run named with them would share an imported run's id, someone else's included.
        pattern=r"^[^\s:~]+$",
        description=(
            "An active run to join; an ended run to continue (a new run seeded with what "
            "memory holds about it); any other id names the new run. No whitespace, ':' or "
            "'~' (those name imported runs)."
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
    segment_type: str | None = Field(
        default=None, description="An event's kind: user_message, tool_result, imported, ..."
    )
    fact_kind: FactKind | None = None
    status: str = Field(default="active", description="A fact's: active, superseded, ...")
    confidence: float = 1.0
    entities: list[str] = Field(default_factory=list)
    paths: list[str] = Field(
        default_factory=list,
        description='Recall paths that found it ("beside": next to a best hit, found by none).',
    )
    joined: list[str] = Field(
        default_factory=list,
        description="Ids of the other messages of its burst (one speaker's pieces in a row)"
        " shown with it; its text holds them all, in the order sent.",
    )


class MemoryHits(BaseModel):
    hits: list[MemoryHitOut]
    read_as: dict[str, str] = Field(
        default_factory=dict,
        description="The query's typing slips and the words they were searched as"
        ' ({"resturant": "restaurant"}); empty when it was searched as typed.',
    )


class ReadAs(BaseModel):
    read_as: dict[str, str] = Field(
        description="The query's typing slips and the words a search reads them as."
    )


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


class ReplacedFact(BaseModel):
    """A value a remembered fact superseded (it stays in the slot's history)."""

    id: str
    key: str
    value: str


class RememberedOut(FactOut):
    """What ``POST /v1/memory`` stored, and what that did to what memory believed."""

    outcome: Literal["new", "confirmed", "replaced"] = Field(
        description="new: a fact of its own; confirmed: an equal fact was already held (its "
        "evidence grew, no duplicate was made); replaced: it is the slot's current value now, "
        "and ``replaces`` lists the values it superseded."
    )
    replaces: list[ReplacedFact] = Field(
        default_factory=list, description="The superseded values, oldest first."
    )


class MemoryEvents(BaseModel):
    events: list[EventOut]


class ForgetOut(BaseModel):
    """What ``DELETE /v1/memory/{id}`` removed, and whether the text's bytes remain on disk."""

    deleted: int = Field(description="Events and facts deleted from the graph.")
    counts: dict[str, int] = Field(
        description="Records each store lost: facts derived from the memory, run archives "
        "quoting it, keyword documents, cached vectors, session-log messages, summaries."
    )
    bytes_remain: list[str] = Field(
        description="Files still holding the deleted text's bytes (no query reaches them) "
        "until compacted; empty when none does."
    )
    note: str = Field(description="How to compact them away, when ``bytes_remain`` is not empty.")
    forgotten_ids: list[str] = Field(
        default_factory=list,
        description="Of the ids asked for, those forgotten (the rest: missing or another's).",
    )


class ForgetIn(_In):
    """What ``POST /v1/memory/forget`` forgets: what a search finds, or an entity."""

    by: Literal["query", "entity"] = Field(
        description="query: the hits of a search for ``text`` that hold all its words, "
        "superseded and expired facts included; entity: the facts about the "
        "entity named ``text``, the turns mentioning it, and the node when nothing else is."
    )
    text: str = Field(min_length=1, max_length=2000)
    limit: int = Field(default=5, ge=1, le=100, description="Hits of a query to forget.")
    dry_run: bool = Field(default=False, description="Only list what would be forgotten.")


class ForgetPlanOut(BaseModel):
    """What a forget by query or entity found (of the caller's) and, unless a dry run, did."""

    target: str
    hits: list[MemoryHitOut] = Field(description="The search's hits (a forget by query).")
    events: int
    facts: int
    forgotten: ForgetOut | None = Field(default=None, description="None: a dry run.")


MAX_FACT_CHARS = 100_000
"""The longest memory one fact holds, on every face (a longer text is a document)."""


def too_long(text: str) -> str:
    """Why ``text`` is too long to remember, or ""."""
    if len(text) <= MAX_FACT_CHARS:
        return ""
    return (
        f"the text is {len(text):,} characters; a memory holds at most {MAX_FACT_CHARS:,}: "
        "split it, or add it to the knowledge base as a document (shiyi kb add FILE)"
    )


class FactIn(_In):
    """What ``shiyi memory add`` takes: the memory, its kind, the slot it sets and who may
    read it (written as the caller's; ``workspace`` needs a workspace writer)."""

    text: str = Field(
        min_length=1, max_length=MAX_FACT_CHARS, pattern=r"\S", description="Not only whitespace."
    )
    kind: FactKind = "semantic"
    key: str = Field(
        default="",
        max_length=200,
        description="The slot it sets, e.g. 'lives in': a new value supersedes the old one. "
        "Empty: a plain statement of an attribute ('my favourite colour is green', 'I live in "
        "Munich') sets its own.",
    )
    scope: Scope = Field(default="user", description="user, agent or workspace (shared).")


class FactPatch(_In):
    key: str | None = Field(
        default=None,
        max_length=200,
        description="The slot, e.g. 'lives in' (empty: none); the page shows 'key: value'.",
    )
    value: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_FACT_CHARS,
        pattern=r"\S",
        description="A leading copy of the key ('lives in: Paris' for key 'lives in') is "
        "dropped: the value is stored as 'Paris'.",
    )
    kind: FactKind | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)


class CacheRateOut(BaseModel):
    """One cache's hits and misses since the serving process started."""

    name: str
    hits: int
    misses: int
    rate: float | None = Field(description="Hits over lookups (null before the first).")


class MemoryHealthDetail(BaseModel):
    """``shiyi memory health``'s numbers."""

    facts: int = 0
    by_kind: dict[str, int] = Field(default_factory=dict)
    by_tier: dict[str, int] = Field(default_factory=dict)
    by_scope: dict[str, int] = Field(default_factory=dict)
    by_status: dict[str, int] = Field(default_factory=dict)
    active_confidence: float | None = Field(
        default=None, description="Average confidence of active facts (null when none)."
    )
    expired: int = 0
    pending: int = Field(default=0, description="Facts waiting for confirmation.")
    open_conflicts: int = 0
    events: int = 0
    entities: int = 0
    relations: int = 0
    sessions: int = 0
    embedded: dict[str, int] = Field(
        default_factory=dict, description="Vectors stored per node kind."
    )
    keyword_docs: int = 0
    jobs_pending: int = Field(default=0, description="Queued or running background jobs.")
    jobs_failed: int = 0
    caches: list[CacheRateOut] = Field(
        default_factory=list,
        description="Result, embedding, summary and system-prompt caches: hits and misses.",
    )


class MemoryHealth(BaseModel):
    enabled: bool
    counts: dict[str, int]
    sessions: int
    active_runs: int
    detail: MemoryHealthDetail | None = None
    """Facts by kind/tier/scope/status, conflicts, vectors and jobs (``shiyi memory health``)."""


# --- the memory page (/v1/memory/facts, entities, timeline, conflicts, expired) ----------


class FactReplacement(BaseModel):
    """The fact that superseded another (its newer version)."""

    id: str
    key: str
    value: str
    status: str
    valid_from: float | None


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
    source_turns: int = Field(
        default=0,
        description="Source turns (of source_events) still remembered and readable: what "
        "the fact was learned from; evidence_count counts observations instead.",
    )
    source_sessions: int = Field(default=0, description="Sessions those turns belong to.")
    replaced_by: FactReplacement | None = Field(
        default=None, description="A superseded fact's newer version (when readable)."
    )
    subject: list[str] = Field(
        default_factory=list,
        description="Whom the fact is about when not the user (its slot's subject): "
        "['sister'] for 'my sister lives in Porto'; empty: the user.  Filled by the history.",
    )


class JobCount(BaseModel):
    kind: str
    status: str
    count: int


class FailedJobOut(BaseModel):
    id: int
    kind: str
    attempts: int
    last_error: str
    updated_at: float


class JobBacklogOut(BaseModel):
    """Unfinished jobs of one kind in one state: how long and why they wait."""

    kind: str
    status: str
    count: int
    ready: int = Field(description="Of count, how many may run now.")
    oldest_age: float = Field(description="Seconds since the oldest was queued.")
    retry_in: float = Field(description="Seconds until a deferred one may run (0: one is ready).")
    reason: str = Field(description="The latest deferral reason or error ('' for other users).")


class MemoryJobs(BaseModel):
    """The background queue, store-wide; failed jobs' errors (and deferral reasons) only for
    the server's own (configured) identity: an error can quote another user's text."""

    summary: list[JobCount]
    failed: list[FailedJobOut]
    ready: int = Field(
        default=0, description="Pending jobs due now, plus running ones (deferred ones wait)."
    )
    waiting: list[JobBacklogOut] = Field(default_factory=list)
    runnable: list[str] | None = Field(
        default=None,
        description="Job kinds the server's worker can run now (extraction needs a usable"
        " fast model); None: not reported.",
    )
    worker_running: bool = Field(
        default=True,
        description="A worker runs the jobs as they come due (false: a `shiyi memory` "
        "command opened the store without one).",
    )


class JobsRetried(BaseModel):
    requeued: int


class FactHistory(BaseModel):
    """Every version of a fact slot the caller may see, oldest first."""

    facts: list[FactDetail]


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


class EntitySummary(BaseModel):
    """An entity the caller's current facts are about."""

    name: str
    facts: int = Field(description="The caller's current facts about it.")


class EntityList(BaseModel):
    entities: list[EntitySummary]


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
