"""Reads of the PostgreSQL store: records by id, recency, anchors, vectors and counts.

Orders follow the embedded store: records come back in the order their ids were asked for,
recency is ``ts, iteration, segment`` (then id, so ties are stable here).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from shiyi.errors import StorageError
from shiyi.index.vector_cache import TIE_DECIMALS
from shiyi.memory.models import Anchor, EntityRecord, EventRecord, FactRecord, NodeKind, Scored
from shiyi.memory.postgres.owners import owner_condition
from shiyi.memory.postgres.rows import (
    EVENT_SELECT,
    FACT_SELECT,
    entity_from_row,
    event_from_row,
    fact_from_row,
    vector_literal,
)
from shiyi.memory.postgres.schema import VECTOR_TABLES, Conn
from shiyi.memory.text.entities import normalize_name

EXACT_SCAN_ROWS = 10_000
"""Below this many rows vector search scans exactly (what the embedded store does, and
~10 ms); above it the HNSW index answers, with a wide candidate list (``HNSW_EF_SEARCH``)."""
HNSW_EF_SEARCH = 200
_KEY = {"event": "id", "fact": "id", "entity": "name"}


def get_events(conn: Conn, ids: Sequence[str]) -> list[EventRecord]:
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return []
    rows = conn.execute(
        f"SELECT {EVENT_SELECT} FROM events AS e WHERE e.id = ANY(%s)", (wanted,)
    ).fetchall()
    found = {str(r[0]): event_from_row(r) for r in rows}
    return [found[i] for i in wanted if i in found]


def event_owners(conn: Conn, ids: Sequence[str], session_id: str) -> set[tuple[str, str]]:
    rows = conn.execute(
        "SELECT DISTINCT user_id, agent_id FROM events WHERE id = ANY(%s) OR session_id = %s",
        (list(dict.fromkeys(ids)), session_id),
    ).fetchall()
    return {(str(user), str(agent)) for user, agent in rows}


def get_facts(conn: Conn, ids: Sequence[str]) -> list[FactRecord]:
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return []
    rows = conn.execute(
        f"SELECT {FACT_SELECT} FROM facts AS f WHERE f.id = ANY(%s)", (wanted,)
    ).fetchall()
    if not rows:  # recall candidates are mostly events: no link queries for them
        return []
    present = [str(r[0]) for r in rows]
    about = _links(conn, "SELECT fact_id, entity FROM about", present)
    derived = _links(conn, "SELECT fact_id, event_id FROM derived_from", present)
    found = {
        str(r[0]): fact_from_row(r, about.get(str(r[0]), []), derived.get(str(r[0]), []))
        for r in rows
    }
    return [found[i] for i in wanted if i in found]


def _links(conn: Conn, select: str, fact_ids: list[str]) -> dict[str, list[str]]:
    """Fact id -> the other ends of its edges, in the order the edges were made."""
    links: dict[str, list[str]] = {}
    rows = conn.execute(f"{select} WHERE fact_id = ANY(%s) ORDER BY seq", (fact_ids,))
    for fact_id, other in rows:
        links.setdefault(str(fact_id), []).append(str(other))
    return links


def recent_events(
    conn: Conn, limit: int, session_id: str | None, owner: tuple[str, str] | None = None
) -> list[EventRecord]:
    """Newest first; ``owner``: only the events of this (user_id, agent_id)."""
    conditions = ["e.session_id = %(sid)s"] if session_id is not None else []
    if owner is not None:
        conditions.append("e.user_id = %(user)s AND e.agent_id = %(agent)s")
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    user, agent = owner or ("", "")
    rows = conn.execute(
        f"SELECT {EVENT_SELECT} FROM events AS e {where}"
        " ORDER BY e.ts DESC, e.iteration DESC, e.segment DESC, e.id DESC LIMIT %(n)s",
        {"sid": session_id, "n": max(limit, 0), "user": user, "agent": agent},
    ).fetchall()
    return [event_from_row(r) for r in rows]


def fact_ids(conn: Conn, limit: int) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM facts ORDER BY updated_at DESC NULLS LAST, id LIMIT %s", (max(limit, 0),)
    ).fetchall()
    return [str(r[0]) for r in rows]


def find_entities(conn: Conn, names: Sequence[str]) -> list[EntityRecord]:
    """Entities whose name or an alias is among ``names`` (as given or normalised)."""
    wanted = list(dict.fromkeys([*names, *(normalize_name(n) for n in names)]))
    if not wanted:
        return []
    rows = conn.execute(
        "SELECT name, type, display, aliases FROM entities"
        " WHERE name = ANY(%(w)s) OR aliases && %(w)s::text[] ORDER BY name",
        {"w": wanted},
    ).fetchall()
    return [entity_from_row(r) for r in rows]


def expand(conn: Conn, anchor: Anchor, window: int) -> list[EventRecord]:
    rows = conn.execute(
        f"SELECT {EVENT_SELECT} FROM events AS e WHERE e.run_id = %s"
        " ORDER BY e.iteration, e.segment, e.ts, e.id",
        (anchor.run_id,),
    ).fetchall()
    events = [event_from_row(r) for r in rows]
    key = (anchor.iteration, anchor.segment)
    at = next((i for i, e in enumerate(events) if (e.iteration, e.segment) >= key), len(events))
    return events[max(at - window, 0) : at + window + 1]


def turns_around(conn: Conn, spots: Sequence[tuple[str, int]], reach: int) -> list[EventRecord]:
    """One query for every spot (``events_run_order`` serves each pair of bounds)."""
    wanted = list(dict.fromkeys(spots))
    if not wanted:
        return []
    rows = conn.execute(
        f"SELECT DISTINCT ON (e.id) {EVENT_SELECT} FROM events AS e"
        " JOIN unnest(%s::text[], %s::int[]) AS s(run_id, iteration) ON e.run_id = s.run_id"
        " AND e.iteration BETWEEN s.iteration - %s AND s.iteration + %s",
        ([r for r, _ in wanted], [i for _, i in wanted], reach, reach),
    ).fetchall()
    return [event_from_row(r) for r in rows]


def events_missing_embeddings(conn: Conn, limit: int) -> list[EventRecord]:
    """Oldest first, so a backfill proceeds in conversation order; echoes (derived turns,
    never recalled) are never embedded."""
    rows = conn.execute(
        f"SELECT {EVENT_SELECT} FROM events AS e WHERE e.embedding IS NULL AND e.derived = ''"
        " ORDER BY e.ts, e.iteration, e.segment, e.id LIMIT %s",
        (max(limit, 0),),
    ).fetchall()
    return [event_from_row(r) for r in rows]


_COUNTS = {
    "events": "SELECT count(*) FROM events",
    "entities": "SELECT count(*) FROM entities",
    "facts": "SELECT count(*) FROM facts",
    "relations": "SELECT count(*) FROM relations",
    "sessions": "SELECT count(*) FROM sessions",
    "embedded_events": "SELECT count(*) FROM events WHERE embedding IS NOT NULL",
    "embedded_facts": "SELECT count(*) FROM facts WHERE embedding IS NOT NULL",
    "embedded_entities": "SELECT count(*) FROM entities WHERE embedding IS NOT NULL",
    "keyword_docs": "SELECT docs FROM keyword_stats",
}


def counts(conn: Conn) -> dict[str, int]:
    query = "SELECT " + ", ".join(f"({sql}) AS {name}" for name, sql in _COUNTS.items())
    row = conn.execute(query).fetchone()
    assert row is not None
    return {name: int(value) for name, value in zip(_COUNTS, row, strict=True)}


def vector_search(
    conn: Conn,
    node: NodeKind,
    vector: Sequence[float],
    limit: int,
    dimension: int,
    rows: RowEstimate | None = None,
    owners: Collection[str] | None = None,
) -> list[Scored]:
    """Cosine similarity, best first: exact on small tables, HNSW on large ones; ``owners``:
    only rows of these owner tags (:mod:`shiyi.memory.scopes`); a viewer's own events are
    compared exactly when they are few, however large the table, and so are their facts."""
    if limit <= 0:
        return []
    if len(vector) != dimension:
        raise StorageError(f"query vector has dimension {len(vector)}, not {dimension}")
    table, key = VECTOR_TABLES[node], _KEY[node]
    estimate = rows(conn, table) if rows is not None else estimated_rows(conn, table)
    where = None if owners is None else owner_condition(node, owners)
    # a viewer's events are one index range, their facts two (their own and the workspace's)
    few = node in ("event", "fact") and where is not None and _few(conn, table, where)
    exact = estimate < EXACT_SCAN_ROWS or few
    return nearest(conn, table, key, vector_literal(vector), limit, exact=exact, where=where)


def _few(conn: Conn, table: str, where: tuple[str, dict[str, Any]]) -> bool:
    """Whether fewer than ``EXACT_SCAN_ROWS`` rows meet ``where`` (counted up to that, along
    the owner index): then they are compared exactly, not walked to through the HNSW index.

    The index's iterative scan goes on past other owners' rows only so far (pgvector's
    ``hnsw.max_scan_tuples``) and in the graph's approximate order: a user holding ~500 of
    100,000 turns, the rest another user's copies of the same turns, got semantic recall@10
    0.407 through the index against 0.502 alone, hybrid p95 94 ms (``bench/crowd_bench.py
    --postgres``)."""
    condition, params = where
    capped = f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {condition} LIMIT %(cap)s) AS t"
    row = conn.execute(capped, {**params, "cap": EXACT_SCAN_ROWS}).fetchone()
    return row is not None and int(row[0]) < EXACT_SCAN_ROWS


RowEstimate = Callable[[Conn, str], float]


def run_similarity(
    conn: Conn, run_ids: Sequence[str], vector: Sequence[float], dimension: int
) -> dict[str, float]:
    """Per run, the cosine between ``vector`` and the mean of its turns' unit vectors (the
    embedded store's :meth:`~shiyi.index.vector_cache.VectorCache.centroid_similarity`)."""
    if not run_ids:
        return {}
    if len(vector) != dimension:
        raise StorageError(f"query vector has dimension {len(vector)}, not {dimension}")
    # The sum, not avg(): the cosine is the same and pgvector's avg accumulates in float8
    # arrays (72 runs of 50 turns: 16 ms against 9.5 ms).
    rows = conn.execute(
        "SELECT run_id, 1 - (sum(l2_normalize(embedding)) <=> %(q)s::vector) FROM events"
        " WHERE run_id = ANY(%(runs)s) AND embedding IS NOT NULL GROUP BY run_id",
        {"q": vector_literal(vector), "runs": list(dict.fromkeys(run_ids))},
    ).fetchall()
    # A centroid of zero length (turns that cancel out) has no direction: NaN, read as 0.0.
    return {str(run): float(s) if s == s else 0.0 for run, s in rows}


def run_centroid(conn: Conn, run_ids: Sequence[str]) -> list[float]:
    """The mean of these runs' turns' unit vectors, of unit length (the embedded store's
    :meth:`~shiyi.index.vector_cache.VectorCache.centroid`); ``[]`` when none is embedded."""
    if not run_ids:
        return []
    row = conn.execute(
        "SELECT l2_normalize(sum(l2_normalize(embedding)))::text FROM events"
        " WHERE run_id = ANY(%(runs)s) AND embedding IS NOT NULL",
        {"runs": list(dict.fromkeys(run_ids))},
    ).fetchone()
    text = row[0] if row else None
    centroid = [float(x) for x in str(text).strip("[]").split(",")] if text else []
    return centroid if any(centroid) else []  # turns that cancel out have no direction


def nearest(
    conn: Conn,
    table: str,
    key: str,
    query: str,
    limit: int,
    *,
    exact: bool,
    where: tuple[str, dict[str, Any]] | None = None,
) -> list[Scored]:
    """The ``limit`` nearest to ``query`` (pgvector's text form: sent as text and parsed
    once, 10x cheaper than a float8[] parameter); ``where``: only rows meeting this
    condition (SQL, its named parameters).  The HNSW scan then goes on past rows that fail
    it until it has ``limit`` (pgvector's iterative scan), in order."""
    cast = "%(q)s::vector"
    # round(float8) is rint(), half to even, as numpy's round: the same double for the
    # same similarity (numeric rounding would cost 3x the distance computation).
    scale = f"{10**TIE_DECIMALS}::float8"
    similarity = f"round((1 - (embedding <=> q.v)) * {scale}) / {scale}"
    if exact:
        # The query vector is built once (a prepared statement would cast it per row), and
        # the ORDER BY is no bare operator: no index, every row compared.
        source = f"{table}, (SELECT {cast} AS v OFFSET 0) AS q"
        order = f"similarity DESC, embedded_order, {key}"
    else:
        conn.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, limit)}")
        # The row estimate already chose the index; the planner's cost model may not.
        conn.execute("SET LOCAL enable_seqscan = off")
        if where is not None:
            conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
        source = f"{table}, (SELECT {cast} AS v) AS q"
        order = f"embedding <=> {cast}"  # a parameter: what the index scan needs
    condition, params = where or ("true", {})
    rows = conn.execute(
        f"SELECT {key}, {similarity} AS similarity FROM {source}"
        f" WHERE embedding IS NOT NULL AND ({condition}) ORDER BY {order} LIMIT %(n)s",
        {"q": query, "n": limit, **params},
    ).fetchall()
    return [Scored(str(i), float(score)) for i, score in rows]


def estimated_rows(conn: Conn, table: str) -> float:
    """The planner's row estimate; a table never analysed (-1) is counted up to the limit."""
    row = conn.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", (table,))
    found = row.fetchone()
    estimate = float(found[0]) if found else -1.0
    if estimate >= 0:
        return estimate
    capped = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT {EXACT_SCAN_ROWS}) AS t"
    ).fetchone()
    return float(capped[0]) if capped else 0.0
