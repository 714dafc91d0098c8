"""Seams of the memory layer: the store every backend implements, and the embedder."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal, Protocol, runtime_checkable

from shiyi.index.types import Embedder as Embedder  # memory code names it from here too
from shiyi.memory.models import (
    Anchor,
    EntityRecord,
    EventRecord,
    FactRecord,
    Neighbourhood,
    NodeKind,
    RelationFilter,
    RelationRecord,
    Scored,
    VisibleCounts,
)
from shiyi.memory.scopes import Viewer


@runtime_checkable
class MemoryStore(Protocol):
    """Everything retrieval and the write pipeline need from a storage backend.

    Implementations: the embedded Kuzu + SQLite store; PostgreSQL later.  All methods are
    blocking and called from worker threads.  Writes may be funnelled through one writer.
    """

    # --- metadata ----------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...

    # --- writes --------------------------------------------------------------------------
    def add_events(self, events: Sequence[EventRecord]) -> int:
        """Insert events (ignoring ids already present) with IN_SESSION and NEXT links;
        returns how many were new.  Also indexes their text for keyword search."""
        ...

    def set_embeddings(
        self, node: NodeKind, vectors: Sequence[tuple[str, list[float]]]
    ) -> None: ...
    def index_keywords(self, items: Sequence[tuple[str, Literal["event", "fact"], str]]) -> int:
        """Index (id, node, text) for keyword search again, replacing an id's earlier terms
        (after an upgrade that reads text differently: ``shiyi memory relink``)."""
        ...

    def upsert_entities(self, entities: Sequence[EntityRecord]) -> None: ...
    def link_mentions(self, pairs: Sequence[tuple[str, str]]) -> None:
        """(event id, entity name) MENTIONS edges; duplicates are ignored."""
        ...

    def add_relations(self, relations: Sequence[RelationRecord]) -> None: ...
    def upsert_facts(self, facts: Sequence[FactRecord]) -> None: ...
    def touch(self, ids: Sequence[str], at: float) -> None:
        """Count an access to these events/facts (access_count += 1, last_accessed)."""
        ...

    def delete(self, ids: Sequence[str]) -> int:
        """Hard-delete events/facts with their edges, vectors and keyword entries."""
        ...

    # --- reads -------------------------------------------------------------------------
    def vector_search(
        self,
        node: NodeKind,
        vector: Sequence[float],
        limit: int,
        owners: Collection[str] | None = None,
    ) -> list[Scored]:
        """The ``limit`` nearest ``node`` records; ``owners``: only records of these owner
        tags (:meth:`~shiyi.memory.scopes.Viewer.owners`), filtered inside the search."""
        ...

    def run_similarity(self, run_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """Per run, the cosine between ``vector`` and the mean of its embedded turns' unit
        vectors (what the run is about as a whole); runs with no embedded turn are missing."""
        ...

    def run_centroid(self, run_ids: Sequence[str]) -> list[float]:
        """The mean of the unit vectors of these runs' embedded turns, of unit length: what
        they are about together; ``[]`` when none is embedded (or they cancel out)."""
        ...

    def keyword_search(
        self,
        query: str,
        limit: int,
        owners: Collection[str] | None = None,
        node: Literal["event", "fact"] | None = None,
    ) -> list[Scored]:
        """Events and facts by keywords (numbers, identifiers and CJK words kept); ``owners``:
        only those of these owner tags (and any whose owner is not known yet); ``node``:
        only events or only facts."""
        ...

    def keyword_spelling(self, query: str, unheld: Collection[str] = ()) -> dict[str, str]:
        """The query's typing slips, each with the indexed word keyword search reads it as
        (:mod:`shiyi.index.spelling`): {"resturant": "restaurant"}; ``unheld``: words read
        as slips though some document holds them (none the asker may see)."""
        ...

    def neighbourhood(
        self,
        entity_names: Sequence[str],
        hops: int,
        limit: int,
        follows: RelationFilter | None = None,
        owner: tuple[str, str] | None = None,
    ) -> Neighbourhood:
        """``follows``: which RELATED_TO edges may be returned and walked (hops=2); default
        all (maintenance).  Readers pass the viewer's (:meth:`Viewer.sees_relation`).
        ``owner``: only the turns of that (user_id, agent_id) and the facts it may see (its
        own, its agent's, the workspace's) are reached, and an entity's mentions are counted
        among its turns (its weight, whether it is a hub)."""
        ...

    def recent_events(
        self, limit: int, session_id: str | None = None, owner: tuple[str, str] | None = None
    ) -> list[EventRecord]:
        """Newest first; ``owner``: only the events of this (user_id, agent_id)."""
        ...

    def get_events(self, ids: Sequence[str]) -> list[EventRecord]: ...
    def event_owners(self, ids: Sequence[str], session_id: str) -> set[tuple[str, str]]:
        """(user_id, agent_id) of the stored events among ``ids`` or in ``session_id``: whose
        names an import would use.  Cheap while the worker writes (no graph transaction)."""
        ...

    def get_facts(self, ids: Sequence[str]) -> list[FactRecord]: ...
    def fact_ids(self, limit: int) -> list[str]:
        """Ids of stored facts, newest first."""
        ...

    def find_entities(self, names: Sequence[str]) -> list[EntityRecord]:
        """Entities whose normalised name or alias is among ``names``."""
        ...

    def expand(self, anchor: Anchor, window: int) -> list[EventRecord]:
        """The anchored event's run neighbours: ``window`` events before and after."""
        ...

    def turns_around(self, spots: Sequence[tuple[str, int]], reach: int) -> list[EventRecord]:
        """The events of each ``(run_id, iteration)`` spot's run whose iteration is within
        ``reach`` of the spot's (recall reads a top hit's neighbours with it)."""
        ...

    def events_missing_embeddings(self, limit: int) -> list[EventRecord]: ...

    # --- lifecycle -----------------------------------------------------------------------
    def slot_candidates(
        self,
        entity_names: Sequence[str],
        keys: Sequence[str],
        statuses: Sequence[str],
        user_id: str = "",
    ) -> list[FactRecord]:
        """Facts with these statuses about one of these entities or with one of these keys:
        the only candidates for dedup and conflicts (same entity pair / key); ``user_id``:
        only that user's (a server's other users' facts are never read)."""
        ...

    def mentioned_entities(self, event_ids: Sequence[str]) -> list[str]: ...
    def add_supersedes(self, pairs: Sequence[tuple[str, str]]) -> None:
        """(newer fact id, older fact id) SUPERSEDES edges."""
        ...

    def superseded_by(self, fact_ids: Sequence[str]) -> dict[str, str]: ...
    def supersedes(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        """Newer fact id -> the ids of the facts it replaced directly."""
        ...

    def session_window(
        self, session_id: str, until: float, types: Sequence[str], limit: int
    ) -> list[EventRecord]:
        """Newest ``limit`` events of these segment types at or before ``until``, oldest first."""
        ...

    def facts_derived_from(self, event_ids: Sequence[str]) -> list[str]: ...
    def expire_facts(self, now: float) -> list[str]:
        """Short-term facts past ``expires_at`` become 'expired'; returns their ids."""
        ...

    def fact_groups(self) -> list[tuple[str, str, str, str, int, float]]:
        """(kind, tier, scope, status, count, average confidence) per group of facts."""
        ...

    def open_conflicts(self) -> int: ...
    def facts_by_status(self, statuses: Sequence[str], limit: int) -> list[str]: ...
    def latest_facts(self, user_id: str, limit: int) -> list[str]:
        """Ids of one user's active facts, the newest made first: what a correction ("sorry,
        I meant 4pm") may take back."""
        ...

    def entity_footprint(self, name: str) -> tuple[list[str], list[str]]:
        """(fact ids about, event ids mentioning) one entity."""
        ...

    def user_footprint(self, user_id: str) -> tuple[list[str], list[str]]: ...
    def delete_entities(self, names: Sequence[str]) -> int: ...
    def delete_orphan_sessions(self, user_id: str) -> int: ...
    def counts(self) -> dict[str, int]: ...
    def visible_counts(self, viewer: Viewer, legacy: bool) -> VisibleCounts:
        """What ``viewer`` may read, counted; ``legacy``: also relations without an owner."""
        ...

    def compact(self) -> None:
        """Reclaim the space (and bytes) of deleted records; no other call may run meanwhile."""
        ...

    def close(self) -> None: ...
