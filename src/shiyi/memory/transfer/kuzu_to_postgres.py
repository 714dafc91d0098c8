"""Copy an embedded store (Kuzu + SQLite) into PostgreSQL, losslessly and re-runnably.

What is copied: sessions (titles, creation times), events with their access counts, entities
(aliases, types), MENTIONS, RELATED_TO (weights, validity), facts with every field (access
counts, lifecycle state) and their ABOUT / DERIVED_FROM edges, SUPERSEDES, the vectors of
events, facts and entities as stored (nothing is re-embedded) and the meta entries.  The
keyword index is rebuilt from the same texts with the same tokenizer.

Every step is an upsert or an insert that ignores what is present, so running it again (after
an interruption, or to catch up) copies what is missing and duplicates nothing.  The job
queue and the embedding cache are local files and are not part of the store.

The protocol has no "every edge" reads, so this module reads the Kuzu graph directly; the
store is locked by the caller for the duration (no write can interleave).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from shiyi.memory.kuzu import queries as kuzu_queries
from shiyi.memory.kuzu import schema as kuzu_schema
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import NodeKind, RelationRecord
from shiyi.memory.postgres.store import PostgresStore

Progress = Callable[[str, int, int], None]
"""(stage, done, total): called after every batch."""

_STORE_META = {kuzu_schema.META_VERSION, kuzu_schema.META_MODEL, kuzu_schema.META_DIMENSION}
COMPARED = (
    "events", "entities", "facts", "relations", "sessions",
    "embedded_events", "embedded_facts", "embedded_entities",
)  # fmt: skip
"""Counts that must be equal after a copy (the keyword index is checked separately: the
embedded one may also hold documents of other kinds)."""


@dataclass
class MigrationReport:
    source: dict[str, int]
    target: dict[str, int]
    copied: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def mismatches(self) -> dict[str, tuple[int, int]]:
        """Counts that differ between source and target (empty: a complete copy)."""
        found = {
            key: (self.source.get(key, 0), self.target.get(key, 0))
            for key in COMPARED
            if self.source.get(key, 0) != self.target.get(key, 0)
        }
        expected_docs = self.target.get("events", 0) + self.target.get("facts", 0)
        if self.target.get("keyword_docs", 0) != expected_docs:
            found["keyword_docs"] = (expected_docs, self.target.get("keyword_docs", 0))
        return found


def embedding_model_of(source: EmbeddedStore) -> tuple[str, int]:
    """(model, dimension) the source's vectors were made with: the target must match."""
    model = source.get_meta(kuzu_schema.META_MODEL) or source.graph.embedding_model
    dimension = int(source.get_meta(kuzu_schema.META_DIMENSION) or source.graph.dimension)
    return model, dimension


class Copier:
    """One copy run from ``source`` to ``target`` in batches of ``batch`` rows."""

    def __init__(
        self,
        source: EmbeddedStore,
        target: PostgresStore,
        *,
        batch: int = 2000,
        progress: Progress | None = None,
    ) -> None:
        self.source, self.target = source, target
        self.batch = max(1, batch)
        self.progress = progress or (lambda stage, done, total: None)
        self.copied: dict[str, int] = {}

    def run(self) -> MigrationReport:
        started = time.perf_counter()
        self._meta()
        self._sessions()
        self._events()
        self._entities()
        self._mentions()
        self._relations()
        self._facts()
        self._supersedes()
        for node in ("event", "fact", "entity"):
            self._vectors(node)
        self.target.analyze()  # vector search picks exact scan or HNSW from the row estimate
        return MigrationReport(
            self.source.counts(), self.target.counts(), self.copied, time.perf_counter() - started
        )

    # --- reading the graph ---------------------------------------------------------------

    def _rows(self, query: str) -> list[list[Any]]:
        return self.source.graph._read(query)

    def _pages(self, match: str, returns: str) -> tuple[int, Iterator[list[list[Any]]]]:
        """(row count, rows in pages) of ``match``; the store is locked, so the scan order
        is stable between pages."""
        total = int(self._rows(f"{match} RETURN count(*)")[0][0])

        def pages() -> Iterator[list[list[Any]]]:
            for start in range(0, total, self.batch):
                yield self._rows(f"{match} RETURN {returns} SKIP {start} LIMIT {self.batch}")

        return total, pages()

    def _step(
        self,
        stage: str,
        paged: tuple[int, Iterator[Sequence[Any]]],
        write: Callable[[Any], None],
    ) -> None:
        total, pages = paged
        done = 0
        for page in pages:
            write(page)
            done += len(page)
            self.progress(stage, done, total)
        self.copied[stage] = done

    # --- the steps -------------------------------------------------------------------------

    def _meta(self) -> None:
        rows = [r for r in self._rows("MATCH (m:Meta) RETURN m.key, m.value")
                if r[0] not in _STORE_META]  # fmt: skip
        for key, value in rows:
            self.target.set_meta(str(key), str(value))
        self.copied["meta"] = len(rows)

    def _sessions(self) -> None:
        rows = self._rows(
            "MATCH (s:Session) RETURN s.id, s.title, s.created_at, s.user_id, s.agent_id"
        )
        for start in range(0, len(rows), self.batch):
            page = rows[start : start + self.batch]
            self.target.upsert_sessions([(str(r[0]), r[1] or "", r[2], r[3], r[4]) for r in page])
        self.copied["sessions"] = len(rows)
        self.progress("sessions", len(rows), len(rows))

    def _events(self) -> None:
        returns = f"{kuzu_queries.EVENT_RETURN}, e.access_count, e.last_accessed"

        def write(page: list[list[Any]]) -> None:
            width = len(kuzu_queries.EVENT_COLUMNS)
            self.target.add_events([kuzu_queries.event_from_row(r[:width]) for r in page])
            access = [(str(r[0]), int(r[width] or 0), r[width + 1]) for r in page]
            self.target.set_event_access([a for a in access if a[1] or a[2] is not None])

        self._step("events", self._pages("MATCH (e:Event)", returns), write)

    def _entities(self) -> None:
        rows = self._rows("MATCH (n:Entity) RETURN n.name, n.type, n.display, n.aliases")
        entities = [kuzu_queries.entity_from_row(r) for r in rows]
        self._step("entities", _chunks(entities, self.batch), self.target.upsert_entities)

    def _mentions(self) -> None:
        pages = self._pages("MATCH (e:Event)-[:MENTIONS]->(n:Entity)", "e.id, n.name")
        self._step(
            "mentions",
            pages,
            lambda page: self.target.link_mentions([(str(e), str(n)) for e, n in page]),
        )

    def _relations(self) -> None:
        rows = self._rows(
            "MATCH (a:Entity)-[r:RELATED_TO]->(b:Entity)"
            " RETURN a.name, b.name, r.type, r.weight, r.valid_from, r.valid_to,"
            " r.user_id, r.agent_id"
        )
        relations = [
            RelationRecord(
                str(a),
                str(b),
                str(t),
                float(1.0 if w is None else w),
                vf,
                vt,
                str(user or ""),
                str(agent or ""),
            )
            for a, b, t, w, vf, vt, user, agent in rows
        ]
        self._step("relations", _chunks(relations, self.batch), self.target.add_relations)

    def _facts(self) -> None:
        ids = [str(r[0]) for r in self._rows("MATCH (f:Fact) RETURN f.id")]
        self._step(
            "facts",
            _chunks(ids, self.batch),
            lambda page: self.target.upsert_facts(self.source.get_facts(page)),
        )

    def _supersedes(self) -> None:
        rows = self._rows("MATCH (n:Fact)-[:SUPERSEDES]->(o:Fact) RETURN n.id, o.id")
        pairs = [(str(n), str(o)) for n, o in rows]
        self._step("supersedes", _chunks(pairs, self.batch), self.target.add_supersedes)

    def _vectors(self, node: NodeKind) -> None:
        table = kuzu_schema.VECTOR_TABLES[node].table
        ids, matrix = kuzu_queries.load_vectors(
            self.source.graph._reader(), table, self.source.graph.dimension
        )
        stage = f"{node} vectors"

        def pages() -> Iterator[list[tuple[str, list[float]]]]:
            for start in range(0, len(ids), self.batch):
                rows = matrix[start : start + self.batch].tolist()  # float32 values, exactly
                yield list(zip(ids[start : start + self.batch], rows, strict=True))

        self._step(stage, (len(ids), pages()), lambda page: self.target.set_embeddings(node, page))


def _chunks(items: list[Any], size: int) -> tuple[int, Iterator[list[Any]]]:
    pages = (items[start : start + size] for start in range(0, len(items), size))
    return len(items), pages


def migrate(
    source: EmbeddedStore,
    target: PostgresStore,
    *,
    batch: int = 2000,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy everything in ``source`` into ``target`` (both open); see the module docs."""
    return Copier(source, target, batch=batch, progress=progress).run()
