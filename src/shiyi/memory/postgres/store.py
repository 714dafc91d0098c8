"""The scale-out store: PostgreSQL + pgvector behind the same ``MemoryStore`` protocol.

Selected by ``memory.store: postgresql://user:password@host:port/database``.  Every call
borrows a connection from a pool (``psycopg_pool``) and runs in one transaction: all of a
call's writes or none.  Many processes may share the database.

The embedding cache stays in ``<data dir>/memory/memory.sqlite3``; the job queue is in the
database (:mod:`shiyi.memory.postgres.jobs`).  ``exclusive=True`` takes the data directory's
lock (one owner, as with the embedded store); ``shiyi worker`` opens it with
``exclusive=False``, so several workers share one data directory.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import psycopg
from psycopg_pool import PoolTimeout

from shiyi.errors import ConfigError, StorageError
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
from shiyi.memory.postgres import graph, keywords, reads, schema, visible, writes
from shiyi.memory.postgres import lifecycle as lc
from shiyi.memory.postgres.connect import connect, open_pool
from shiyi.memory.postgres.keywords import IndexedNode
from shiyi.memory.postgres.nul import nul_free
from shiyi.memory.postgres.schema import Conn
from shiyi.memory.scopes import Viewer

SQLITE_NAME = "memory.sqlite3"
_ESTIMATE_TTL = 10.0
_SCHEMES = ("postgresql", "postgres")


def redacted(url: str) -> str:
    """``host:port/database`` of a URL, for messages (never the password)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # out of range: shown as written
        port = ":" + parts.netloc.rsplit(":", 1)[-1]
    return f"postgresql://{host}{port}{parts.path or '/'}"


def check_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES:
        raise ConfigError(
            f"memory.store must be 'embedded' or a postgresql:// URL, not {url!r}; "
            "e.g. postgresql://shiyi:secret@localhost:5432/shiyi"
        )
    try:
        parts.port  # noqa: B018  (parsing the port validates it)
    except ValueError as exc:
        raise ConfigError(f"memory.store URL {redacted(url)!r} has a bad port: {exc}") from exc


class KeywordDocs:
    """The store's keyword index on its own (``forget`` reports what it removed there)."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def delete(self, ids: Sequence[str]) -> int:
        with self._store._tx() as conn:
            return keywords.delete(conn, ids)

    def search(self, query: str, limit: int = 20, node: IndexedNode | None = None) -> list[Scored]:
        with self._store._tx() as conn:
            return keywords.search(conn, query, limit, node)

    def count(self) -> int:
        with self._store._tx() as conn:
            return keywords.count(conn)


class PostgresStore:
    """A :class:`~shiyi.memory.protocol.MemoryStore` in a PostgreSQL database."""

    def __init__(
        self,
        url: str,
        *,
        dimension: int = 384,
        embedding_model: str = "all-MiniLM-L6-v2",
        check_model: bool = True,
        directory: Path | None = None,
        lock_timeout: float = 5.0,
        pool_size: int = 8,
        connect_timeout: float = 10.0,
        exclusive: bool = True,
    ) -> None:
        check_url(url)
        self.url = url
        self.where = redacted(url)
        self.dimension = dimension
        self.embedding_model = embedding_model
        self.directory = directory
        self._closed = False
        self._close_lock = threading.Lock()
        self.keywords = KeywordDocs(self)
        self._row_estimates: dict[str, tuple[float, float]] = {}
        self.lock = StoreLock(directory) if directory is not None and exclusive else None
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
        if self.lock is not None:
            self.lock.acquire(timeout=lock_timeout)
        try:
            self._migrate(connect_timeout, check_model)
            self._pool = open_pool(
                url,
                "memory",
                self.where,
                name="shiyi",
                min_size=1,
                max_size=max(1, pool_size),
                timeout=connect_timeout,
            )
        except BaseException:
            if self.lock is not None:
                self.lock.release()
            raise

    def _migrate(self, timeout: float, check_model: bool) -> None:
        with connect(self.url, "memory", self.where, timeout) as conn:
            try:
                schema.migrate(
                    conn, self.where, self.dimension, self.embedding_model, check_model=check_model
                )
            except psycopg.Error as exc:
                raise StorageError(
                    f"could not set up the memory database {self.where}: {exc}"
                ) from exc

    @property
    def sqlite_path(self) -> Path | None:
        """The local SQLite file of the job queue and the embedding cache (None: opened
        without a data directory)."""
        return None if self.directory is None else self.directory / SQLITE_NAME

    # --- plumbing ----------------------------------------------------------------------

    @contextmanager
    def _tx(self) -> Iterator[Conn]:
        """A pooled connection inside one transaction (committed on success)."""
        if self._closed:
            raise StorageError(f"the memory database {self.where} is closed")
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StorageError(
                f"no connection to the memory database {self.where} became free or could be "
                f"opened ({exc}); is the server up?"
            ) from exc
        except psycopg.OperationalError as exc:
            raise StorageError(f"the memory database {self.where} failed: {exc}") from exc

    # --- metadata ----------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        with self._tx() as conn:
            return schema.read_meta(conn, key)

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as conn:
            schema.write_meta(conn, key, nul_free(value))

    # --- writes ------------------------------------------------------------------------

    def add_events(self, events: Sequence[EventRecord]) -> int:
        with self._tx() as conn:
            return len(writes.add_events(conn, nul_free(list(events))))

    def bulk_add_events(self, events: Sequence[EventRecord]) -> int:
        """``add_events`` through COPY: for imports of many thousands of events."""
        with self._tx() as conn:
            return len(writes.copy_events(conn, nul_free(list(events))))

    def set_embeddings(self, node: NodeKind, vectors: Sequence[tuple[str, list[float]]]) -> None:
        with self._tx() as conn:
            writes.set_embeddings(conn, node, vectors, self.dimension)

    def index_keywords(self, items: Sequence[tuple[str, Literal["event", "fact"], str]]) -> int:
        with self._tx() as conn:
            return keywords.index(conn, nul_free(list(items)))

    def upsert_entities(self, entities: Sequence[EntityRecord]) -> None:
        with self._tx() as conn:
            writes.upsert_entities(conn, nul_free(list(entities)))

    def link_mentions(self, pairs: Sequence[tuple[str, str]]) -> None:
        with self._tx() as conn:
            writes.link_mentions(conn, nul_free(list(pairs)))

    def add_relations(self, relations: Sequence[RelationRecord]) -> None:
        with self._tx() as conn:
            writes.add_relations(conn, nul_free(list(relations)))

    def upsert_facts(self, facts: Sequence[FactRecord]) -> None:
        with self._tx() as conn:
            writes.upsert_facts(conn, nul_free(list(facts)))

    def touch(self, ids: Sequence[str], at: float) -> None:
        with self._tx() as conn:
            writes.touch(conn, ids, at)

    def delete(self, ids: Sequence[str]) -> int:
        with self._tx() as conn:
            return writes.delete(conn, ids)

    def add_supersedes(self, pairs: Sequence[tuple[str, str]]) -> None:
        with self._tx() as conn:
            writes.add_supersedes(conn, list(dict.fromkeys(pairs)))

    def expire_facts(self, now: float) -> list[str]:
        with self._tx() as conn:
            return writes.expire_facts(conn, now)

    def delete_entities(self, names: Sequence[str]) -> int:
        with self._tx() as conn:
            return writes.delete_entities(conn, names)

    def delete_orphan_sessions(self, user_id: str) -> int:
        with self._tx() as conn:
            return writes.delete_orphan_sessions(conn, user_id)

    def set_event_access(self, rows: Sequence[tuple[str, int, float | None]]) -> None:
        """Absolute (id, access_count, last_accessed) of events: for copying a store."""
        with self._tx() as conn:
            writes.set_event_access(conn, rows)

    def upsert_sessions(self, rows: Sequence[tuple[str, str, float | None, str, str]]) -> None:
        """(id, title, created_at, user_id, agent_id): for copying a store."""
        with self._tx() as conn:
            writes.upsert_sessions(conn, rows)

    def reset_vectors(self, dimension: int, embedding_model: str) -> None:
        """Drop every vector and switch the store to a new model (``shiyi memory reindex``)."""
        with self._tx() as conn:
            schema.reset_vectors(conn, dimension, embedding_model)
        self.dimension, self.embedding_model = dimension, embedding_model

    # --- reads -------------------------------------------------------------------------

    def vector_search(
        self,
        node: NodeKind,
        vector: Sequence[float],
        limit: int,
        owners: Collection[str] | None = None,
    ) -> list[Scored]:
        with self._tx() as conn:
            return reads.vector_search(
                conn, node, vector, limit, self.dimension, self._estimated_rows, owners
            )

    def run_similarity(self, run_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        with self._tx() as conn:
            return reads.run_similarity(conn, run_ids, vector, self.dimension)

    def run_centroid(self, run_ids: Sequence[str]) -> list[float]:
        with self._tx() as conn:
            return reads.run_centroid(conn, run_ids)

    def _estimated_rows(self, conn: Conn, table: str) -> float:
        """The planner's row count of ``table``, re-read at most every ``_ESTIMATE_TTL`` s:
        it only picks exact scan or HNSW, and is a query per search otherwise."""
        now = time.monotonic()
        cached = self._row_estimates.get(table)
        if cached is not None and now - cached[1] < _ESTIMATE_TTL:
            return cached[0]
        estimate = reads.estimated_rows(conn, table)
        self._row_estimates[table] = (estimate, now)
        return estimate

    def keyword_search(
        self,
        query: str,
        limit: int,
        owners: Collection[str] | None = None,
        node: Literal["event", "fact"] | None = None,
    ) -> list[Scored]:
        with self._tx() as conn:
            return keywords.search(conn, query, limit, node=node, owners=owners)

    def keyword_spelling(self, query: str, unheld: Collection[str] = ()) -> dict[str, str]:
        with self._tx() as conn:
            return keywords.spelling(conn, query, unheld)

    def neighbourhood(
        self,
        entity_names: Sequence[str],
        hops: int,
        limit: int,
        follows: RelationFilter | None = None,
        owner: tuple[str, str] | None = None,
    ) -> Neighbourhood:
        with self._tx() as conn:
            seeds = [e.name for e in reads.find_entities(conn, entity_names)]
            return graph.neighbourhood(conn, seeds, min(hops, 2), limit, follows, owner)

    def recent_events(
        self, limit: int, session_id: str | None = None, owner: tuple[str, str] | None = None
    ) -> list[EventRecord]:
        with self._tx() as conn:
            return reads.recent_events(conn, limit, session_id, owner)

    def get_events(self, ids: Sequence[str]) -> list[EventRecord]:
        with self._tx() as conn:
            return reads.get_events(conn, ids)

    def event_owners(self, ids: Sequence[str], session_id: str) -> set[tuple[str, str]]:
        with self._tx() as conn:
            return reads.event_owners(conn, ids, session_id)

    def get_facts(self, ids: Sequence[str]) -> list[FactRecord]:
        with self._tx() as conn:
            return reads.get_facts(conn, ids)

    def fact_ids(self, limit: int) -> list[str]:
        with self._tx() as conn:
            return reads.fact_ids(conn, limit)

    def find_entities(self, names: Sequence[str]) -> list[EntityRecord]:
        with self._tx() as conn:
            return reads.find_entities(conn, names)

    def expand(self, anchor: Anchor, window: int) -> list[EventRecord]:
        with self._tx() as conn:
            return reads.expand(conn, anchor, window)

    def turns_around(self, spots: Sequence[tuple[str, int]], reach: int) -> list[EventRecord]:
        with self._tx() as conn:
            return reads.turns_around(conn, spots, reach)

    def events_missing_embeddings(self, limit: int) -> list[EventRecord]:
        with self._tx() as conn:
            return reads.events_missing_embeddings(conn, limit)

    def counts(self) -> dict[str, int]:
        with self._tx() as conn:
            return reads.counts(conn)

    def visible_counts(self, viewer: Viewer, legacy: bool) -> VisibleCounts:
        with self._tx() as conn:
            return visible.visible_counts(conn, viewer, legacy)

    # --- lifecycle -----------------------------------------------------------------------

    def slot_candidates(
        self,
        entity_names: Sequence[str],
        keys: Sequence[str],
        statuses: Sequence[str],
        user_id: str = "",
    ) -> list[FactRecord]:
        with self._tx() as conn:
            found = lc.slot_candidates(conn, entity_names, keys, statuses, user_id)
            return reads.get_facts(conn, found)

    def mentioned_entities(self, event_ids: Sequence[str]) -> list[str]:
        with self._tx() as conn:
            return lc.mentioned_entities(conn, event_ids)

    def superseded_by(self, fact_ids: Sequence[str]) -> dict[str, str]:
        with self._tx() as conn:
            return lc.superseded_by(conn, fact_ids)

    def supersedes(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        with self._tx() as conn:
            return lc.supersedes(conn, fact_ids)

    def session_window(
        self, session_id: str, until: float, types: Sequence[str], limit: int
    ) -> list[EventRecord]:
        """The newest ``limit`` events of these segment types at or before ``until``, oldest
        first (what an extraction or consolidation reads)."""
        with self._tx() as conn:
            found = lc.session_window(conn, session_id, until, types, limit)
            return reads.get_events(conn, found[::-1])

    def facts_derived_from(self, event_ids: Sequence[str]) -> list[str]:
        with self._tx() as conn:
            return lc.facts_derived_from(conn, event_ids)

    def fact_groups(self) -> list[tuple[str, str, str, str, int, float]]:
        with self._tx() as conn:
            return lc.fact_groups(conn)

    def open_conflicts(self) -> int:
        with self._tx() as conn:
            return lc.open_conflicts(conn)

    def facts_by_status(self, statuses: Sequence[str], limit: int) -> list[str]:
        with self._tx() as conn:
            return lc.facts_by_status(conn, statuses, limit)

    def entity_footprint(self, name: str) -> tuple[list[str], list[str]]:
        with self._tx() as conn:
            return lc.entity_footprint(conn, name)

    def latest_facts(self, user_id: str, limit: int) -> list[str]:
        with self._tx() as conn:
            return lc.latest_facts(conn, user_id, limit)

    def user_footprint(self, user_id: str) -> tuple[list[str], list[str]]:
        with self._tx() as conn:
            return lc.user_footprint(conn, user_id)

    # --- maintenance ---------------------------------------------------------------------

    def analyze(self) -> None:
        """Refresh the planner's statistics (after a bulk load: vector search picks exact
        scan or HNSW from the row estimate)."""
        self._autocommit("ANALYZE")
        self._row_estimates.clear()

    def compact(self) -> None:
        """VACUUM FULL: rewrite the tables so deleted rows' bytes leave the table files
        (``forget``'s promise; WAL segments holding them are recycled by checkpoints)."""
        self._autocommit("VACUUM (FULL, ANALYZE)")

    def _autocommit(self, statement: str) -> None:
        with self._tx() as conn:
            conn.rollback()  # VACUUM cannot run inside the pool's implicit transaction
            conn.autocommit = True
            try:
                conn.execute(statement)
            finally:
                conn.autocommit = False

    def close(self) -> None:
        """Idempotent; closes the pool (waiting for calls in flight) and frees the directory."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._pool.close()
        finally:
            if self.lock is not None:
                self.lock.release()
