"""The graph + vector half of the embedded store, on Kuzu 0.11.3.

Design notes (measured on kuzu 0.11.3, see the report in tests/memory/kuzu/test_connection.py):

* Vectors sit in side tables (see :mod:`shiyi.memory.kuzu.schema`) because an indexed column
  cannot be ``SET``; ``set_embeddings`` deletes and re-inserts the side rows, and the HNSW index
  picks up inserts immediately, so newly embedded nodes are searchable at once — no rebuild.
* Large event batches go in with ``COPY ... FROM <pyarrow table>``; small ones with ``UNWIND``.
* Vector search and graph expansion are separate queries (a combined query was ~50x slower).
* One ``kuzu.Database`` per process; writes are serialised by a lock on one write connection
  (Kuzu allows one write transaction at a time); reads use one connection per thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kuzu

from shiyi.errors import StorageError
from shiyi.index.vector_cache import Loader, Matrix, OwnerLookup, VectorCache
from shiyi.memory.kuzu import graph as graph_path
from shiyi.memory.kuzu import lifecycle as lc
from shiyi.memory.kuzu import queries as q
from shiyi.memory.kuzu import schema
from shiyi.memory.kuzu import writes as w
from shiyi.memory.kuzu.entity_names import EntityNames
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
)
from shiyi.memory.text.entities import normalize_name

log = logging.getLogger(__name__)

RECENT_CACHE = 50
CHECKPOINT_AFTER_WRITES = 500
"""Write transactions after which the graph checkpoints.  Kuzu checkpoints by itself once
its log reaches 16 MB, but a transaction that updates rows in place (an access count, an
entity seen again) logs a few bytes while it holds memory until the next checkpoint: after
~1,740 such transactions every query failed with "the buffer pool is full", whatever the
pool's size (64 or 512 MB) or the rows per transaction (1 or 10), on 200 events as on 100k.
A checkpoint every 200 touches of 10 rows at 100k events took 28 ms on average (85 ms at
most), and the touches ran twice as fast."""
_PRIMARY_KEY: dict[NodeKind, str] = {"event": "id", "fact": "id", "entity": "name"}
_NODE_TABLE: dict[NodeKind, str] = {"event": "Event", "fact": "Fact", "entity": "Entity"}


class KuzuGraph:
    """Sessions, events, entities, facts, their edges and vectors in one Kuzu database file."""

    def __init__(
        self,
        path: Path,
        dimension: int = 384,
        embedding_model: str = "all-MiniLM-L6-v2",
        *,
        check_model: bool = True,
    ) -> None:
        self.path = path
        self.dimension = dimension
        self.embedding_model = embedding_model
        self._db = schema.open_database(path)
        self._write_lock = threading.Lock()
        self._recent: list[EventRecord] | None = None
        self._vectors = {
            node: VectorCache(dimension, self._vector_loader(node)) for node in schema.VECTOR_TABLES
        }
        self._entity_names = EntityNames(lambda: q.entity_names(self._reader()))
        self._local = threading.local()
        self._connections: list[kuzu.Connection] = []
        self._writes = 0  # write transactions since the last checkpoint
        self._closed = False
        try:
            self._writer = self._new_connection()
            with self._write_lock:
                schema.migrate(
                    self._writer, path, dimension, embedding_model, check_model=check_model
                )
        except BaseException:
            self.close()
            raise

    # --- plumbing ----------------------------------------------------------------------

    def _new_connection(self) -> kuzu.Connection:
        conn = kuzu.Connection(self._db)
        self._connections.append(conn)
        return conn

    def _reader(self) -> kuzu.Connection:
        if self._closed:
            raise StorageError(f"the memory graph at {self.path} is closed")
        conn: kuzu.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._new_connection()
        return conn

    def _read(self, query: str, params: dict[str, Any] | None = None) -> list[Any]:
        return schema.execute(self._reader(), query, params)

    @contextmanager
    def _transaction(self) -> Iterator[kuzu.Connection]:
        """The write connection inside one transaction: all of a call's writes or none;
        every :data:`CHECKPOINT_AFTER_WRITES` of them, a checkpoint."""
        if self._closed:
            raise StorageError(f"the memory graph at {self.path} is closed")
        with self._write_lock:
            if self._closed:  # closed while this call waited for the lock
                raise StorageError(f"the memory graph at {self.path} is closed")
            schema.execute(self._writer, "BEGIN TRANSACTION")
            try:
                yield self._writer
            except BaseException:
                w.rollback(self._writer)
                raise
            w.commit(self._writer)
            self._writes += 1
            if self._writes >= CHECKPOINT_AFTER_WRITES:
                self._checkpoint()

    def _checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (with the write lock held)."""
        try:
            schema.execute(self._writer, "CHECKPOINT")
            self._writes = 0
        except StorageError as exc:  # readers still busy: the next write tries again
            log.info("graph checkpoint postponed: %s", exc)

    # --- metadata ----------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        return schema.read_meta(self._reader(), key)

    def set_meta(self, key: str, value: str) -> None:
        with self._transaction() as conn:
            schema.write_meta(conn, key, value)

    # --- writes ------------------------------------------------------------------------

    def add_events(self, events: Sequence[EventRecord]) -> int:
        unique = list({e.id: e for e in reversed(events)}.values())[::-1]
        if not unique:
            return 0
        with self._transaction() as conn:
            present = w.existing(conn, "Event", "id", [e.id for e in unique])
            new = [e for e in unique if e.id not in present]
            if new:
                w.merge_sessions(conn, new)
                w.insert_events(conn, new)
                w.sync_next_chains(conn, {e.session_id for e in new})
        if new:
            self._recent = None
        return len(new)

    def set_embeddings(self, node: NodeKind, vectors: Sequence[tuple[str, list[float]]]) -> None:
        latest = dict(vectors)  # last vector wins for a repeated id
        bad = [i for i, v in latest.items() if len(v) != self.dimension]
        if bad:
            raise StorageError(
                f"vectors for {bad[:3]} have the wrong dimension (expected {self.dimension})"
            )
        with self._transaction() as conn:
            rows = self._drop_old_vectors(conn, node, latest)
            if rows:
                self._copy_vectors(conn, node, rows)
        self._vectors[node].upsert(rows)

    def _drop_old_vectors(
        self, conn: kuzu.Connection, node: NodeKind, latest: dict[str, list[float]]
    ) -> list[tuple[str, list[float]]]:
        """Delete the stored vectors of these ids; returns the rows whose node exists."""
        table = schema.VECTOR_TABLES[node].table
        known = w.existing(conn, _NODE_TABLE[node], _PRIMARY_KEY[node], list(latest))
        rows = [(i, v) for i, v in latest.items() if i in known]
        if rows:
            ids = [i for i, _ in rows]
            schema.execute(conn, f"MATCH (v:{table}) WHERE v.id IN $ids DELETE v", {"ids": ids})
        return rows

    def _copy_vectors(
        self, conn: kuzu.Connection, node: NodeKind, rows: list[tuple[str, list[float]]]
    ) -> None:
        table = schema.VECTOR_TABLES[node].table
        schema.execute(conn, f"COPY {table} FROM $t", {"t": q.vectors_arrow(rows, self.dimension)})

    def upsert_entities(self, entities: Sequence[EntityRecord]) -> None:
        if not entities:
            return
        with self._transaction() as conn:
            merged: dict[str, dict[str, Any]] = {}
            old = {e.name: e for e in q.entities_by_name(conn, [e.name for e in entities])}
            for entity in entities:
                previous = merged.get(entity.name)
                base = EntityRecord(**previous) if previous else old.get(entity.name)
                merged[entity.name] = q.merged_entity(base, entity)
            schema.execute(conn, q.MERGE_ENTITIES, {"rows": list(merged.values())})
        self._entity_names.stored((row["name"], row["aliases"]) for row in merged.values())

    def link_mentions(self, pairs: Sequence[tuple[str, str]]) -> None:
        unique = list(dict.fromkeys(pairs))
        if not unique:
            return
        with self._transaction() as conn:
            if len(unique) < w.COPY_EDGES_THRESHOLD:
                schema.execute(conn, q.LINK_MENTIONS, {"pairs": [list(p) for p in unique]})
                return
            # Bulk: COPY needs both ends to exist and the edge to be new (it cannot MERGE).
            events = w.existing(conn, "Event", "id", [e for e, _ in unique])
            names = w.existing(conn, "Entity", "name", [n for _, n in unique])
            present = {
                (str(r[0]), str(r[1]))
                for r in schema.execute(conn, q.EVENT_MENTIONS, {"ids": sorted(events)})
            }
            new = [p for p in unique if p[0] in events and p[1] in names and p not in present]
            if new:
                schema.execute(conn, "COPY MENTIONS FROM $t", {"t": q.pairs_arrow(new)})

    def add_relations(self, relations: Sequence[RelationRecord]) -> None:
        # Same edge twice in one batch: the last one wins, as in sequential calls.
        rows = {(r.src, r.dst, r.type, r.user_id, r.agent_id): r for r in relations}
        if not rows:
            return
        params = [
            {"src": r.src, "dst": r.dst, "type": r.type, "weight": float(r.weight),
             "valid_from": r.valid_from, "valid_to": r.valid_to, "user_id": r.user_id,
             "agent_id": r.agent_id}
            for r in rows.values()
        ]  # fmt: skip
        with self._transaction() as conn:
            for row in params:  # one MERGE per edge: a batch MERGE cannot see its own creations
                schema.execute(conn, q.MERGE_RELATIONS, {"rows": [row]})

    def upsert_facts(self, facts: Sequence[FactRecord]) -> None:
        if not facts:
            return
        about = [[f.id, name] for f in facts for name in dict.fromkeys(f.entities)]
        derived = [[f.id, eid] for f in facts for eid in dict.fromkeys(f.source_events)]
        with self._transaction() as conn:
            schema.execute(conn, q.MERGE_FACTS, {"rows": [q.fact_row(f) for f in facts]})
            if about:
                schema.execute(conn, q.LINK_ABOUT, {"pairs": about})
            if derived:
                schema.execute(conn, q.LINK_DERIVED, {"pairs": derived})

    def add_supersedes(self, pairs: Sequence[tuple[str, str]]) -> None:
        """(newer fact id, older fact id) SUPERSEDES edges; the older one keeps its history."""
        if pairs:
            with self._transaction() as conn:
                schema.execute(conn, q.LINK_SUPERSEDES, {"pairs": [list(p) for p in pairs]})

    def touch(self, ids: Sequence[str], at: float) -> None:
        if not ids:
            return
        with self._transaction() as conn:
            # One primary-key lookup per id (a list match would scan the whole table),
            # prepared once: parsing and planning cost more than the update itself.  An id
            # found as an event is no fact, so facts are looked for among the rest only.
            events = q.execute_each(conn, q.TOUCH["Event"], w.touch_params(ids, at))
            found = {str(row[0]) for row in events}
            rest = [key for key in ids if key not in found]
            if rest:
                q.execute_each(conn, q.TOUCH["Fact"], w.touch_params(rest, at))

    def delete(self, ids: Sequence[str]) -> int:
        """Hard delete with DETACH; the NEXT chain of the affected sessions is re-linked."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return 0
        with self._transaction() as conn:
            sessions = {
                str(r[0])
                for r in schema.execute(
                    conn, "MATCH (e:Event) WHERE e.id IN $ids RETURN e.session_id", {"ids": wanted}
                )
            }
            removed = 0
            for table in ("Event", "Fact"):
                removed += len(w.existing(conn, table, "id", wanted))
                schema.execute(conn, f"MATCH (n:{table}) WHERE n.id IN $ids DETACH DELETE n",
                               {"ids": wanted})  # fmt: skip
            for vt in (schema.VECTOR_TABLES["event"], schema.VECTOR_TABLES["fact"]):
                schema.execute(
                    conn, f"MATCH (v:{vt.table}) WHERE v.id IN $ids DELETE v", {"ids": wanted}
                )
            if sessions:
                w.sync_next_chains(conn, sessions)
        for node in ("event", "fact"):
            self._vectors[node].delete(wanted)
        self._recent = None
        return removed

    def reset_vectors(self, dimension: int, embedding_model: str) -> None:
        """Drop every vector and switch the store to a new model (``shiyi memory reindex``)."""
        with self._write_lock:
            schema.drop_vector_tables(self._writer)
            schema.create_vector_tables(self._writer, dimension)
            schema.write_meta(self._writer, schema.META_MODEL, embedding_model)
            schema.write_meta(self._writer, schema.META_DIMENSION, str(dimension))
            for cache in self._vectors.values():
                cache.reset(dimension)
        self.dimension, self.embedding_model = dimension, embedding_model

    # --- reads -------------------------------------------------------------------------

    def vector_search(
        self,
        node: NodeKind,
        vector: Sequence[float],
        limit: int,
        owners: Collection[str] | None = None,
    ) -> list[Scored]:
        """``owners``: only vectors of these owner tags (needs :meth:`look_up_owners`)."""
        if limit <= 0:
            return []
        if len(vector) != self.dimension:
            raise StorageError(f"query vector has dimension {len(vector)}, not {self.dimension}")
        return self._vectors[node].search(vector, limit, owners)

    def look_up_owners(self, node: NodeKind, lookup: OwnerLookup) -> None:
        """How searches limited to some owners learn who owns a ``node`` vector."""
        self._vectors[node].owners_of = lookup

    def forget_vector_owners(self, node: NodeKind, ids: Sequence[str]) -> None:
        """These records' owners may have changed (a fact's scope)."""
        self._vectors[node].forget_owners(ids)

    def centroid_similarity(
        self, groups: Mapping[str, Sequence[str]], vector: Sequence[float]
    ) -> dict[str, float]:
        """See :meth:`~shiyi.index.vector_cache.VectorCache.centroid_similarity` (events)."""
        if len(vector) != self.dimension:
            raise StorageError(f"query vector has dimension {len(vector)}, not {self.dimension}")
        return self._vectors["event"].centroid_similarity(groups, vector)

    def centroid(self, ids: Sequence[str]) -> list[float]:
        """See :meth:`~shiyi.index.vector_cache.VectorCache.centroid` (events)."""
        return self._vectors["event"].centroid(ids)

    def _vector_loader(self, node: NodeKind) -> Loader:
        table = schema.VECTOR_TABLES[node].table

        def load() -> tuple[list[str], Matrix]:
            return q.load_vectors(self._reader(), table, self.dimension)

        return load

    def neighbourhood(
        self,
        entity_names: Sequence[str],
        hops: int,
        limit: int,
        mentions: graph_path.MentionIndex | None = None,
        follows: RelationFilter | None = None,
        owner: graph_path.Owner | None = None,
    ) -> Neighbourhood:
        """See :func:`~shiyi.memory.kuzu.graph.neighbourhood`; ``mentions``: a faster copy
        of the MENTIONS edges to read instead of the graph's."""
        seeds = self._resolve(entity_names)
        return graph_path.neighbourhood(
            self._reader(), seeds, min(hops, 2), limit, mentions, follows, owner
        )

    def recent_events(
        self, limit: int, session_id: str | None = None, owner: tuple[str, str] | None = None
    ) -> list[EventRecord]:
        """Newest first; ``owner``: only the events of this (user_id, agent_id).

        The store-wide newest few are cached between writes: the hybrid retriever asks for
        them on every query, and the ORDER BY scans every event (7 ms at 100k).  (The store
        reads one owner's newest from its SQLite mirror.)
        """
        if session_id is None and owner is None and 0 < limit <= RECENT_CACHE:
            cached = self._recent
            if cached is None:
                cached = self._recent = self._query_recent(RECENT_CACHE, None, None)
            return cached[:limit]
        return self._query_recent(limit, session_id, owner)

    def _query_recent(
        self, limit: int, session_id: str | None, owner: tuple[str, str] | None
    ) -> list[EventRecord]:
        conditions: list[str] = []
        params: dict[str, Any] = {"n": max(limit, 0)}
        if session_id is not None:
            conditions.append("e.session_id = $sid")
            params["sid"] = session_id
        if owner is not None:
            conditions.append("e.user_id = $user AND e.agent_id = $agent")
            params["user"], params["agent"] = owner
        where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
        rows = self._read(
            f"MATCH (e:Event) {where}RETURN {q.EVENT_RETURN}"
            " ORDER BY e.ts DESC, e.iteration DESC, e.segment DESC LIMIT $n",
            params,
        )
        return [q.event_from_row(r) for r in rows]

    def get_events(self, ids: Sequence[str]) -> list[EventRecord]:
        rows = schema.lookup(
            self._reader(),
            f"MATCH (e:Event {{id: $id}}) RETURN {q.EVENT_RETURN}",
            list(dict.fromkeys(ids)),
        )
        found = {str(r[0]): q.event_from_row(r) for r in rows}
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def get_facts(self, ids: Sequence[str]) -> list[FactRecord]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        rows = q.prepared(
            self._reader(),
            f"MATCH (f:Fact) WHERE f.id IN $ids RETURN {q.FACT_RETURN}",
            {"ids": wanted},
        )
        if not rows:  # recall candidates are mostly events: no link queries for them
            return []
        links = q.fact_links(self._reader(), [str(r[0]) for r in rows])
        found = {str(r[0]): q.fact_from_row(r, *links.get(str(r[0]), ([], []))) for r in rows}
        return [found[i] for i in wanted if i in found]

    def all_events(self, batch: int = 5000) -> Iterator[list[EventRecord]]:
        """Every event, in batches (one read; copying them elsewhere is rare)."""
        rows = self._read(f"MATCH (e:Event) RETURN {q.EVENT_RETURN}")
        for start in range(0, len(rows), batch):
            yield [q.event_from_row(r) for r in rows[start : start + batch]]

    def all_mentions(self, batch: int = 20_000) -> Iterator[list[tuple[str, str, float]]]:
        """Every MENTIONS edge as (event id, entity name, event time), in batches."""
        rows = self._read("MATCH (e:Event)-[:MENTIONS]->(n:Entity) RETURN e.id, n.name, e.ts")
        for start in range(0, len(rows), batch):
            yield [(str(r[0]), str(r[1]), float(r[2] or 0.0)) for r in rows[start : start + batch]]

    def fact_ids(self, limit: int) -> list[str]:
        """Ids of stored facts, newest first (for export and re-embedding)."""
        rows = self._read(
            "MATCH (f:Fact) RETURN f.id ORDER BY f.updated_at DESC LIMIT $n", {"n": limit}
        )
        return [str(r[0]) for r in rows]

    def find_entities(self, names: Sequence[str]) -> list[EntityRecord]:
        """Entities called, or also known as, any of ``names`` (as given or normalised)."""
        found = self._resolve(names)
        return q.entities_by_name(self._reader(), found) if found else []

    def _resolve(self, names: Sequence[str]) -> list[str]:
        return self._entity_names.resolve([*names, *(normalize_name(n) for n in names)])

    def expand(self, anchor: Anchor, window: int) -> list[EventRecord]:
        rows = self._read(
            f"MATCH (e:Event) WHERE e.run_id = $run RETURN {q.EVENT_RETURN}"
            " ORDER BY e.iteration, e.segment, e.ts, e.id",
            {"run": anchor.run_id},
        )
        events = [q.event_from_row(r) for r in rows]
        key = (anchor.iteration, anchor.segment)
        at = next((i for i, e in enumerate(events) if (e.iteration, e.segment) >= key), len(events))
        return events[max(at - window, 0) : at + window + 1]

    def turns_around(self, spots: Sequence[tuple[str, int]], reach: int) -> list[EventRecord]:
        found: dict[str, EventRecord] = {}
        for run_id, iteration in dict.fromkeys(spots):
            rows = self._read(
                f"MATCH (e:Event) WHERE e.run_id = $run AND e.iteration >= $low"
                f" AND e.iteration <= $high RETURN {q.EVENT_RETURN}",
                {"run": run_id, "low": iteration - reach, "high": iteration + reach},
            )
            found.update((e.id, e) for e in map(q.event_from_row, rows))
        return list(found.values())

    def events_missing_embeddings(self, limit: int) -> list[EventRecord]:
        """Oldest first, so a backfill proceeds in conversation order; echoes (derived
        turns, never recalled) are never embedded."""
        rows = self._read(
            "MATCH (e:Event) WHERE e.derived = ''"
            " AND NOT EXISTS { MATCH (v:EventVec) WHERE v.id = e.id }"
            f" RETURN {q.EVENT_RETURN} ORDER BY e.ts, e.iteration, e.segment LIMIT $n",
            {"n": max(limit, 0)},
        )
        return [q.event_from_row(r) for r in rows]

    def counts(self) -> dict[str, int]:
        patterns = {
            "events": "MATCH (n:Event)",
            "entities": "MATCH (n:Entity)",
            "facts": "MATCH (n:Fact)",
            "relations": "MATCH ()-[n:RELATED_TO]->()",
            "sessions": "MATCH (n:Session)",
            "embedded_events": "MATCH (n:EventVec)",
            "embedded_facts": "MATCH (n:FactVec)",
            "embedded_entities": "MATCH (n:EntityVec)",
        }
        return {k: int(self._read(f"{p} RETURN count(n)")[0][0]) for k, p in patterns.items()}

    # --- lifecycle (see :mod:`shiyi.memory.kuzu.lifecycle`) ---------------------------------

    def slot_candidates(
        self, entity_names: Sequence[str], keys: Sequence[str], statuses: Sequence[str]
    ) -> list[FactRecord]:
        found = lc.slot_candidates(self._reader(), entity_names, keys, statuses)
        return self.get_facts(found)

    def mentioned_entities(self, event_ids: Sequence[str]) -> list[str]:
        return sorted(lc.ids_per_key(self._reader(), lc.MENTIONED_BY, event_ids))

    def session_window(
        self, session_id: str, until: float, types: Sequence[str], limit: int
    ) -> list[EventRecord]:
        """The newest ``limit`` events of these segment types at or before ``until``, oldest
        first (what an extraction or consolidation reads)."""
        params = {"sid": session_id, "until": until, "types": list(types), "n": limit}
        found = lc.ids(self._reader(), lc.SESSION_WINDOW, params)
        return self.get_events(found[::-1])

    def facts_derived_from(self, event_ids: Sequence[str]) -> list[str]:
        return lc.ids_per_key(self._reader(), lc.DERIVED_FROM_EVENT, event_ids)

    def expire_facts(self, now: float) -> list[str]:
        with self._transaction() as conn:
            return lc.ids(conn, lc.EXPIRE, {"now": now})

    def fact_groups(self) -> list[tuple[str, str, str, str, int, float]]:
        return lc.fact_groups(self._reader())

    def open_conflicts(self) -> int:
        return int(self._read(lc.OPEN_CONFLICTS)[0][0])

    def superseded_by(self, fact_ids: Sequence[str]) -> dict[str, str]:
        return lc.superseded_by(self._reader(), fact_ids)

    def facts_by_status(self, statuses: Sequence[str], limit: int) -> list[str]:
        return lc.ids(self._reader(), lc.FACTS_BY_STATUS, {"statuses": list(statuses), "n": limit})

    def entity_footprint(self, name: str) -> tuple[list[str], list[str]]:
        """(fact ids ABOUT, event ids MENTIONING) the entity: what forgetting it removes."""
        conn = self._reader()
        return lc.ids(conn, lc.ENTITY_FACTS, {"name": name}), lc.ids(
            conn, lc.ENTITY_EVENTS, {"name": name}
        )

    def user_footprint(self, user_id: str) -> tuple[list[str], list[str]]:
        conn = self._reader()
        return lc.ids(conn, lc.USER_FACTS, {"user": user_id}), lc.ids(
            conn, lc.USER_EVENTS, {"user": user_id}
        )

    def delete_entities(self, names: Sequence[str]) -> int:
        """Entity nodes with every edge (MENTIONS, ABOUT, RELATED_TO) and their vectors."""
        present = 0
        with self._transaction() as conn:
            for name in dict.fromkeys(names):
                present += len(w.existing(conn, "Entity", "name", [name]))
                schema.execute(conn, lc.DELETE_ENTITY, {"name": name})
                schema.execute(conn, lc.DELETE_ENTITY_VEC, {"name": name})
        self._entity_names.deleted(names)
        self._vectors["entity"].delete(list(names))
        return present

    def delete_orphan_sessions(self, user_id: str) -> int:
        with self._transaction() as conn:
            orphans = lc.ids(conn, lc.ORPHAN_SESSIONS, {"user": user_id})
            if orphans:
                schema.execute(conn, lc.DELETE_SESSIONS, {"ids": orphans})
        return len(orphans)

    def close(self) -> None:
        """Idempotent; closes every connection, then the database (releasing its file lock)."""
        if self._closed:
            return
        self._closed = True
        with self._write_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            self._db.close()


# --- helpers (run inside a write transaction or on a reader) -------------------------------
