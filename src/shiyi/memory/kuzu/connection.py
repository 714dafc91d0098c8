"""The graph + vector half of the embedded store, on Kuzu 0.11.3: the database, its
connections and transactions, and every write.  The reads are :mod:`shiyi.memory.kuzu.reads`'s
(:class:`~shiyi.memory.kuzu.reads.GraphReads`, which :class:`KuzuGraph` extends).

Design notes (measured on kuzu 0.11.3, see the report in tests/memory/kuzu/test_connection.py):

* Vectors sit in side tables (see :mod:`shiyi.memory.kuzu.schema`) because an indexed column
  cannot be ``SET``; ``set_embeddings`` deletes and re-inserts the side rows, and the HNSW index
  picks up inserts immediately, so newly embedded nodes are searchable at once — no rebuild.
* Large event batches go in with ``COPY ... FROM <pyarrow table>``; small ones with ``UNWIND``.
* One ``kuzu.Database`` per process; writes are serialised by a lock on one write connection
  (Kuzu allows one write transaction at a time); reads use one connection per thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kuzu

from shiyi.errors import StorageError
from shiyi.index.vector_cache import Loader, Matrix, VectorCache
from shiyi.memory.kuzu import lifecycle as lc
from shiyi.memory.kuzu import queries as q
from shiyi.memory.kuzu import schema
from shiyi.memory.kuzu import writes as w
from shiyi.memory.kuzu.entity_names import EntityNames
from shiyi.memory.kuzu.header import clear_header_slack
from shiyi.memory.kuzu.reads import GraphReads
from shiyi.memory.models import EntityRecord, EventRecord, FactRecord, NodeKind, RelationRecord

log = logging.getLogger(__name__)

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


class KuzuGraph(GraphReads):
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
        self._recent = None
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
            # A commit may checkpoint by itself (a full log; a vector table written), and
            # every checkpoint writes the header page: 17 us a commit (header.py).
            clear_header_slack(self.path)

    def _checkpoint(self) -> None:
        """Fold the write-ahead log into the database file (with the write lock held)."""
        try:
            schema.execute(self._writer, "CHECKPOINT")
            self._writes = 0
        except StorageError as exc:  # readers still busy: the next write tries again
            log.info("graph checkpoint postponed: %s", exc)

    def _vector_loader(self, node: NodeKind) -> Loader:
        table = schema.VECTOR_TABLES[node].table

        def load() -> tuple[list[str], Matrix]:
            return q.load_vectors(self._reader(), table, self.dimension)

        return load

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

    # --- lifecycle writes (see :mod:`shiyi.memory.kuzu.lifecycle`) --------------------------

    def expire_facts(self, now: float) -> list[str]:
        with self._transaction() as conn:
            return lc.ids(conn, lc.EXPIRE, {"now": now})

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
            clear_header_slack(self.path)


# --- helpers (run inside a write transaction or on a reader) -------------------------------
