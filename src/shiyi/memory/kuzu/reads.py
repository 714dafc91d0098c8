"""The read side of the graph: look-ups by id, recency, anchors, entities, counts, the
lifecycle's reads, and vector search with its owner look-ups.

:class:`GraphReads` is what :class:`~shiyi.memory.kuzu.connection.KuzuGraph` reads with; it
runs on the calling thread's reader connection (one per thread) and never takes the write
lock.  It parallels :mod:`shiyi.memory.postgres.reads`.  Measured on kuzu 0.11.3 (see the
report in tests/memory/kuzu/test_connection.py): vector search and graph expansion are
separate queries (a combined query was ~50x slower); vector search reads the in-memory
vector cache, which :class:`KuzuGraph` loads from the side tables and keeps current.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

import kuzu

from shiyi.errors import StorageError
from shiyi.index.vector_cache import OwnerLookup, VectorCache
from shiyi.memory.kuzu import graph as graph_path
from shiyi.memory.kuzu import lifecycle as lc
from shiyi.memory.kuzu import queries as q
from shiyi.memory.kuzu import schema
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

RECENT_CACHE = 50
# Reading facts one by one beats one scan of the table when the table holds more than this
# many facts per fact wanted.  Beside 50,000 facts: 0.9 ms a fact one by one, against a
# scan's 20 ms plus 0.7 ms a fact (even at about 100 facts wanted).
FACTS_PER_LOOKUP = 1_000
COUNT_TTL = 5.0


class GraphReads:
    """Every read of :class:`~shiyi.memory.kuzu.connection.KuzuGraph`, on a reader
    connection; the graph supplies the connection, the vector caches and the entity names."""

    dimension: int
    _vectors: dict[NodeKind, VectorCache]
    _entity_names: EntityNames
    _recent: list[EventRecord] | None
    """The store-wide newest :data:`RECENT_CACHE` events (None: read them again)."""
    _facts_counted: tuple[float, int]
    """When the facts were last counted (monotonic seconds), and how many there were."""

    def _reader(self) -> kuzu.Connection:
        """This thread's reader connection (:class:`KuzuGraph` opens it)."""
        raise NotImplementedError

    def _read(self, query: str, params: dict[str, Any] | None = None) -> list[Any]:
        return schema.execute(self._reader(), query, params)

    # --- vectors ---------------------------------------------------------------------

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

    # --- records ---------------------------------------------------------------------

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
        if len(wanted) * FACTS_PER_LOOKUP < self._fact_count():  # a few among many
            return q.facts_by_key(self._reader(), wanted)
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

    def _fact_count(self) -> int:
        """How many facts the table holds, read again at most every few seconds (the choice
        it informs only needs the order of magnitude)."""
        now = time.monotonic()
        counted_at, count = getattr(self, "_facts_counted", (-COUNT_TTL, 0))
        if now - counted_at >= COUNT_TTL:
            rows = q.prepared(self._reader(), q.FACT_COUNT, {})
            count = int(rows[0][0]) if rows else 0
            self._facts_counted = (now, count)
        return int(count)

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

    def all_facts(self, batch: int = 2000) -> Iterator[list[FactRecord]]:
        """Every fact with its links, in batches (copying them elsewhere is rare)."""
        ids = [str(r[0]) for r in self._read("MATCH (f:Fact) RETURN f.id ORDER BY f.id")]
        for start in range(0, len(ids), batch):
            yield self.get_facts(ids[start : start + batch])

    def all_supersedes(self) -> list[tuple[str, str]]:
        """Every SUPERSEDES edge as (newer fact id, older fact id)."""
        rows = self._read("MATCH (n:Fact)-[:SUPERSEDES]->(o:Fact) RETURN n.id, o.id")
        return [(str(n), str(o)) for n, o in rows]

    def all_entities(self) -> list[EntityRecord]:
        rows = self._read("MATCH (n:Entity) RETURN n.name, n.type, n.display, n.aliases")
        return [q.entity_from_row(r) for r in rows]

    def all_relations(self) -> list[RelationRecord]:
        rows = self._read(
            "MATCH (a:Entity)-[r:RELATED_TO]->(b:Entity) RETURN a.name, b.name, r.type,"
            " r.weight, r.valid_from, r.valid_to, r.user_id, r.agent_id"
        )
        return [
            RelationRecord(str(a), str(b), str(t), float(w or 1.0), vf, vt, str(u or ""),
                           str(g or ""))
            for a, b, t, w, vf, vt, u, g in rows
        ]  # fmt: skip

    def facts_missing_embeddings(self, limit: int) -> list[str]:
        """Ids of facts without a vector (after a rebuild: the worker embeds them again)."""
        rows = self._read(
            "MATCH (f:Fact) WHERE NOT EXISTS { MATCH (v:FactVec) WHERE v.id = f.id }"
            " RETURN f.id ORDER BY f.id LIMIT $n",
            {"n": max(limit, 0)},
        )
        return [str(r[0]) for r in rows]

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
        self,
        entity_names: Sequence[str],
        keys: Sequence[str],
        statuses: Sequence[str],
        user_id: str = "",
    ) -> list[FactRecord]:
        found = lc.slot_candidates(self._reader(), entity_names, keys, statuses, user_id)
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

    def fact_groups(self) -> list[tuple[str, str, str, str, int, float]]:
        return lc.fact_groups(self._reader())

    def open_conflicts(self) -> int:
        return int(self._read(lc.OPEN_CONFLICTS)[0][0])

    def superseded_by(self, fact_ids: Sequence[str]) -> dict[str, str]:
        return lc.superseded_by(self._reader(), fact_ids)

    def supersedes(self, fact_ids: Sequence[str]) -> dict[str, list[str]]:
        return lc.supersedes(self._reader(), fact_ids)

    def facts_by_status(self, statuses: Sequence[str], limit: int) -> list[str]:
        return lc.ids(self._reader(), lc.FACTS_BY_STATUS, {"statuses": list(statuses), "n": limit})

    def entity_footprint(self, name: str) -> tuple[list[str], list[str]]:
        """(fact ids ABOUT, event ids MENTIONING) the entity: what forgetting it removes."""
        conn = self._reader()
        return lc.ids(conn, lc.ENTITY_FACTS, {"name": name}), lc.ids(
            conn, lc.ENTITY_EVENTS, {"name": name}
        )

    def latest_facts(self, user_id: str, limit: int) -> list[str]:
        return lc.ids(self._reader(), lc.LATEST_FACTS, {"user": user_id, "n": max(limit, 0)})

    def user_footprint(self, user_id: str) -> tuple[list[str], list[str]]:
        conn = self._reader()
        return lc.ids(conn, lc.USER_FACTS, {"user": user_id}), lc.ids(
            conn, lc.USER_EVENTS, {"user": user_id}
        )
