"""The embedded store: Kuzu (graph + vectors) and SQLite FTS5 (keywords) in one directory.

One process owns the directory at a time (:class:`StoreLock`); a second one waits up to
``lock_timeout`` and then gets a message naming the holder.  A missing or empty graph beside
a mirror that holds events is damage, not a first start (:mod:`shiyi.memory.kuzu.guard`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Literal

from shiyi.errors import StorageError
from shiyi.index.keyword import KeywordIndex
from shiyi.index.sqlite_file import (
    EMPTY,
    SqliteFile,
    drop_clean_close,
    file_damage,
    integrity_damage,
    stamp_clean_close,
)
from shiyi.memory.kuzu import visible
from shiyi.memory.kuzu.connection import KuzuGraph
from shiyi.memory.kuzu.entity_rows import EntityRows
from shiyi.memory.kuzu.event_rows import EventRows
from shiyi.memory.kuzu.fact_rows import FactRows
from shiyi.memory.kuzu.guard import check_graph_file, damaged_sqlite_message
from shiyi.memory.kuzu.mention_rows import MentionRows
from shiyi.memory.kuzu.probe import check_graph_opens, forget_clean_close, record_clean_close
from shiyi.memory.lock import StoreLock
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
from shiyi.memory.scopes import NOBODY, Viewer, owner_of, owner_tag
from shiyi.memory.text.contextual import indexed_texts

GRAPH_NAME = "graph.kuzu"
SQLITE_NAME = "memory.sqlite3"
_OWNER_BATCH = 2000
"""Documents told their owner per statement batch when an older store first opens."""


def _open_sqlite(path: Path, graph: KuzuGraph) -> SqliteFile:
    damage = file_damage(path)
    if damage == EMPTY and not graph.recent_events(1):
        damage = None  # a store whose first write was cut off: nothing was in it
    elif damage is None:
        damage = integrity_damage(path)
    if damage is not None:
        raise StorageError(damaged_sqlite_message(path, damage))
    try:
        file = SqliteFile(path)
        with file.errors("read the schema"):
            file.conn().execute("SELECT count(*) FROM sqlite_master").fetchone()
        drop_clean_close(path)
    except StorageError as exc:
        cause = exc.__cause__
        if not isinstance(cause, sqlite3.DatabaseError) or isinstance(
            cause, sqlite3.OperationalError
        ):
            raise  # not damage: a lock, a permission, a full disk say so themselves
        raise StorageError(damaged_sqlite_message(path, str(cause))) from exc
    return file


class EmbeddedStore:
    """A :class:`~shiyi.memory.protocol.MemoryStore` on local disk."""

    def __init__(
        self,
        directory: Path,
        *,
        dimension: int = 384,
        embedding_model: str = "all-MiniLM-L6-v2",
        lock_timeout: float = 5.0,
        check_model: bool = True,
        lock: StoreLock | None = None,
    ) -> None:
        """``lock``: the directory's lock, already held (``shiyi doctor`` repairs first);
        released by :meth:`close` like one taken here."""
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.lock = lock or StoreLock(directory)
        self.lock.acquire(timeout=lock_timeout)
        try:
            check_graph_file(directory / GRAPH_NAME, directory / SQLITE_NAME)
            check_graph_opens(directory / GRAPH_NAME)
            self.graph = KuzuGraph(
                directory / GRAPH_NAME,
                dimension=dimension,
                embedding_model=embedding_model,
                check_model=check_model,
            )
            forget_clean_close(directory / GRAPH_NAME)
            self.sqlite = _open_sqlite(directory / SQLITE_NAME, self.graph)
            self.keywords = KeywordIndex(self.sqlite, stems=True)
            self.event_rows = EventRows(self.sqlite)
            self.event_rows.backfill(self.graph.all_events)
            self.mention_rows = MentionRows(self.sqlite)
            self.mention_rows.backfill(self.graph.all_mentions)
            self.mention_rows.fill_owners()
            self.fact_rows = FactRows(self.sqlite)
            self.fact_rows.backfill(self.graph.all_facts, self.graph.all_supersedes)
            self.entity_rows = EntityRows(self.sqlite)
            self.entity_rows.backfill(self.graph.all_entities, self.graph.all_relations)
            self._tell_graph_owners()
            self._backfill_keyword_owners()
        except BaseException:
            graph: KuzuGraph | None = getattr(self, "graph", None)
            if graph is not None:  # the graph opened, the SQLite file did not
                graph.close()
            self.lock.release()
            raise

    @property
    def sqlite_path(self) -> Path:
        return self.directory / SQLITE_NAME

    # --- owners (who may see a record, inside the searches: see shiyi.memory.scopes) -----

    def _tell_graph_owners(self) -> None:
        """How the graph's vector searches for some owners learn who owns a vector."""
        self.graph.look_up_owners("event", self._event_owners)
        self.graph.look_up_owners("fact", self._fact_owners)

    def _event_owners(self, ids: list[str]) -> dict[str, str]:
        return {
            key: owner_tag("agent", user, agent)
            for key, (user, agent) in self.event_rows.who_owns(ids).items()
        }

    def _fact_owners(self, ids: list[str]) -> dict[str, str]:
        return {fact.id: owner_of(fact) for fact in self.graph.get_facts(ids)}

    def _backfill_keyword_owners(self) -> None:
        """Tell the keyword index the owner of each document an older store indexed without
        one (once: 0.9 s for 100,000 turns); a document whose record is gone is nobody's."""
        while unowned := self.keywords.unowned(_OWNER_BATCH):
            events = [key for key, node in unowned if node == "event"]
            facts = [key for key, node in unowned if node == "fact"]
            owners = {key: NOBODY for key, _ in unowned}
            owners |= self._event_owners(events) | self._fact_owners(facts)
            self.keywords.set_owners(owners)

    # --- metadata ----------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        return self.graph.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self.graph.set_meta(key, value)

    # --- writes ------------------------------------------------------------------------

    def add_events(self, events: Sequence[EventRecord]) -> int:
        # The stores keep an id's first record; another owner's turn under a reused id must
        # not replace that record's keyword text either (the index upserts by id).
        held = self.event_rows.get([e.id for e in events])
        kept = [e for e in events if e.id not in held or _same_owner(held[e.id], e)]
        added = self.graph.add_events(events)
        # After the graph: a crash in between leaves the mirror short, which reads survive.
        self.event_rows.add(events)
        texts = indexed_texts(kept)
        owners = {e.id: owner_of(e) for e in kept}
        self.keywords.add([(e.id, "event", t) for e, t in zip(kept, texts, strict=True)], owners)
        return added

    def set_embeddings(self, node: NodeKind, vectors: Sequence[tuple[str, list[float]]]) -> None:
        self.graph.set_embeddings(node, vectors)

    def index_keywords(self, items: Sequence[tuple[str, Literal["event", "fact"], str]]) -> int:
        return self.keywords.add(items)

    def upsert_entities(self, entities: Sequence[EntityRecord]) -> None:
        self.graph.upsert_entities(entities)
        self.entity_rows.upsert(entities)

    def link_mentions(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.graph.link_mentions(pairs)
        self.mention_rows.link(pairs)

    def add_relations(self, relations: Sequence[RelationRecord]) -> None:
        self.graph.add_relations(relations)
        self.entity_rows.relate(relations)

    def upsert_facts(self, facts: Sequence[FactRecord]) -> None:
        self.graph.upsert_facts(facts)
        self.fact_rows.put(facts)
        self.keywords.add(
            [(f.id, "fact", f.text) for f in facts], {f.id: owner_of(f) for f in facts}
        )
        self.graph.forget_vector_owners("fact", [f.id for f in facts])  # a scope may change

    def touch(self, ids: Sequence[str], at: float) -> None:
        self.graph.touch(ids, at)

    def delete(self, ids: Sequence[str]) -> int:
        # Before the graph: a crash in between leaves the mirror short, never stale.
        self.event_rows.delete(ids)
        self.mention_rows.delete_events(ids)
        self.fact_rows.delete(ids)
        removed = self.graph.delete(ids)
        self.keywords.delete(ids)
        return removed

    # --- reads -------------------------------------------------------------------------

    def vector_search(
        self,
        node: NodeKind,
        vector: Sequence[float],
        limit: int,
        owners: Collection[str] | None = None,
    ) -> list[Scored]:
        return self.graph.vector_search(node, vector, limit, owners)

    def run_similarity(self, run_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        # The mirror lists a run's turns (it is backfilled when the store opens); the vectors
        # are the in-memory copy the vector search reads.
        return self.graph.centroid_similarity(self.event_rows.run_members(run_ids), vector)

    def run_centroid(self, run_ids: Sequence[str]) -> list[float]:
        members = self.event_rows.run_members(run_ids)
        return self.graph.centroid([key for keys in members.values() for key in keys])

    def keyword_search(
        self,
        query: str,
        limit: int,
        owners: Collection[str] | None = None,
        node: Literal["event", "fact"] | None = None,
    ) -> list[Scored]:
        return self.keywords.search(query, limit, node=node, owners=owners)

    def keyword_spelling(self, query: str, unheld: Collection[str] = ()) -> dict[str, str]:
        return self.keywords.spelling(query, unheld)

    def neighbourhood(
        self,
        entity_names: Sequence[str],
        hops: int,
        limit: int,
        follows: RelationFilter | None = None,
        owner: tuple[str, str] | None = None,
    ) -> Neighbourhood:
        return self.graph.neighbourhood(
            entity_names, hops, limit, self.mention_rows, follows, owner
        )

    def recent_events(
        self, limit: int, session_id: str | None = None, owner: tuple[str, str] | None = None
    ) -> list[EventRecord]:
        if owner is not None and session_id is None and self.event_rows.complete:
            return self.event_rows.newest(limit, *owner)
        return self.graph.recent_events(limit, session_id, owner)

    def get_events(self, ids: Sequence[str]) -> list[EventRecord]:
        wanted = list(dict.fromkeys(ids))
        found = self.event_rows.get(wanted)
        missing = [i for i in wanted if i not in found]
        if missing:  # facts asked as events, or an event written just before a crash
            found.update((e.id, e) for e in self.graph.get_events(missing))
        return [found[i] for i in wanted if i in found]

    def event_owners(self, ids: Sequence[str], session_id: str) -> set[tuple[str, str]]:
        # From the mirror: a graph read waits while the worker commits a large write (an
        # import's check took 6 s per part that way).  A mirror written before the graph's
        # last events (an older store) is not complete yet: then the graph answers.
        if not self.event_rows.complete:
            present = self.graph.get_events(ids)
            present += self.graph.recent_events(1_000_000, session_id)
            return {(e.user_id, e.agent_id) for e in present}
        return self.event_rows.owners(ids, session_id)

    def get_facts(self, ids: Sequence[str]) -> list[FactRecord]:
        return self.graph.get_facts(ids)

    def fact_ids(self, limit: int) -> list[str]:
        return self.graph.fact_ids(limit)

    def find_entities(self, names: Sequence[str]) -> list[EntityRecord]:
        return self.graph.find_entities(names)

    def expand(self, anchor: Anchor, window: int) -> list[EventRecord]:
        return self.graph.expand(anchor, window)

    def turns_around(self, spots: Sequence[tuple[str, int]], reach: int) -> list[EventRecord]:
        # From the mirror (its run index; the graph has none); an older store's incomplete
        # mirror leaves it to the graph.
        if self.event_rows.complete:
            return self.event_rows.around(spots, reach)
        return self.graph.turns_around(spots, reach)

    def events_missing_embeddings(self, limit: int) -> list[EventRecord]:
        return self.graph.events_missing_embeddings(limit)

    # --- lifecycle -----------------------------------------------------------------------

    def slot_candidates(
        self,
        entity_names: Sequence[str],
        keys: Sequence[str],
        statuses: Sequence[str],
        user_id: str = "",
    ) -> list[FactRecord]:
        return self.graph.slot_candidates(entity_names, keys, statuses, user_id)

    def mentioned_entities(self, event_ids: Sequence[str]) -> list[str]:
        return self.graph.mentioned_entities(event_ids)

    def add_supersedes(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.graph.add_supersedes(pairs)
        self.fact_rows.supersede(pairs)

    def superseded_by(self, fact_ids: Sequence[str]) -> dict[str, str]:
        return self.graph.superseded_by(fact_ids)

    def supersedes(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        return self.graph.supersedes(fact_ids)

    def session_window(
        self, session_id: str, until: float, types: Sequence[str], limit: int
    ) -> list[EventRecord]:
        return self.graph.session_window(session_id, until, types, limit)

    def facts_derived_from(self, event_ids: Sequence[str]) -> list[str]:
        return self.graph.facts_derived_from(event_ids)

    def expire_facts(self, now: float) -> list[str]:
        expired = self.graph.expire_facts(now)
        self.fact_rows.put(self.graph.get_facts(expired))
        return expired

    def fact_groups(self) -> list[tuple[str, str, str, str, int, float]]:
        return self.graph.fact_groups()

    def open_conflicts(self) -> int:
        return self.graph.open_conflicts()

    def facts_by_status(self, statuses: Sequence[str], limit: int) -> list[str]:
        return self.graph.facts_by_status(statuses, limit)

    def entity_footprint(self, name: str) -> tuple[list[str], list[str]]:
        return self.graph.entity_footprint(name)

    def user_footprint(self, user_id: str) -> tuple[list[str], list[str]]:
        return self.graph.user_footprint(user_id)

    def latest_facts(self, user_id: str, limit: int) -> list[str]:
        return self.graph.latest_facts(user_id, limit)

    def delete_entities(self, names: Sequence[str]) -> int:
        self.mention_rows.delete_entities(names)
        self.entity_rows.delete(names)
        return self.graph.delete_entities(names)

    def delete_orphan_sessions(self, user_id: str) -> int:
        return self.graph.delete_orphan_sessions(user_id)

    def counts(self) -> dict[str, int]:
        return {**self.graph.counts(), "keyword_docs": self.keywords.count()}

    def visible_counts(self, viewer: Viewer, legacy: bool) -> VisibleCounts:
        return visible.visible_counts(self.graph._reader(), viewer, legacy)

    def compact(self) -> None:
        """Rewrite the graph file without the bytes of deleted rows (after a forget)."""
        from shiyi.memory.kuzu.compact import rebuild

        graph = self.graph
        graph.close()
        rebuild(graph.path)
        self.graph = KuzuGraph(
            graph.path, dimension=graph.dimension, embedding_model=graph.embedding_model
        )
        self._tell_graph_owners()

    def close(self) -> None:
        try:
            self.sqlite.close()
            stamp_clean_close(self.sqlite.path)
            self.graph.close()
            record_clean_close(self.graph.path)
        finally:
            self.lock.release()


def _same_owner(held: EventRecord, incoming: EventRecord) -> bool:
    return (held.user_id, held.agent_id) == (incoming.user_id, incoming.agent_id)
