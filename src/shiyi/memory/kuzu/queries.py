"""Cypher text and row <-> record conversion for :mod:`shiyi.memory.kuzu.connection` and
:mod:`shiyi.memory.kuzu.reads`."""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import kuzu
import pyarrow as pa

from shiyi.errors import StorageError
from shiyi.memory.models import (
    EntityRecord,
    EventRecord,
    FactKind,
    FactRecord,
    FactStatus,
    Scope,
    SegmentType,
    Tier,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

EVENT_COLUMNS = (
    "id",
    "session_id",
    "run_id",
    "ts",
    "role",
    "content",
    "summary",
    "iteration",
    "segment",
    "segment_type",
    "user_id",
    "agent_id",
    "derived",
)
"""The Event columns an EventRecord carries, in table order (COPY maps columns by position;
``derived`` came with schema version 4, after ``access_count`` and ``last_accessed``)."""

EVENT_RETURN = ", ".join(f"e.{c}" for c in EVENT_COLUMNS)
FACT_COLUMNS = (
    "id",
    "key",
    "value",
    "kind",
    "scope",
    "confidence",
    "status",
    "tier",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "expires_at",
    "access_count",
    "last_accessed",
    "user_id",
    "agent_id",
    "workspace_id",
    "trigger",
    "steps",
    "success_rate",
    "usage_count",
    "evidence_count",
    "anchor",
    "source",
    "conflicts_with",
    "said_at",
    "said_in",
)
FACT_RETURN = ", ".join(f"f.{c}" for c in FACT_COLUMNS)

CREATE_EVENTS = (
    "UNWIND $rows AS r CREATE (:Event {id: r.id, session_id: r.session_id, run_id: r.run_id,"
    " ts: CAST(r.ts AS DOUBLE), role: r.role, content: r.content, summary: r.summary,"
    " iteration: r.iteration, segment: r.segment, segment_type: r.segment_type, user_id: r.user_id,"
    " agent_id: r.agent_id, access_count: 0, derived: r.derived})"
)
MERGE_SESSIONS = (
    "UNWIND $rows AS r MERGE (s:Session {id: r.id}) ON CREATE SET s.title = '',"
    " s.created_at = CAST(r.created_at AS DOUBLE), s.user_id = r.user_id, s.agent_id = r.agent_id"
)
LINK_SESSIONS = (
    "UNWIND $ids AS i MATCH (e:Event {id: i}), (s:Session {id: e.session_id})"
    " CREATE (e)-[:IN_SESSION]->(s)"
)
# Sessions by primary key, never ``s.id IN $sids``: inside the transaction that created
# them, Kuzu 0.11.3 matches that list against the wrong rows for ids over 12 bytes (its
# out-of-line strings), so new chat sessions (ses_ + 12 hex) got another session's events
# or none, and no NEXT chain (tests/memory/kuzu/test_connection.py).
SESSION_EVENTS = (
    "UNWIND $sids AS sid MATCH (e:Event)-[:IN_SESSION]->(s:Session {id: sid})"
    " RETURN sid, e.id, e.ts, e.iteration, e.segment"
)
SESSION_NEXT = (
    "UNWIND $sids AS sid MATCH (a:Event)-[:NEXT]->(b:Event),"
    " (a)-[:IN_SESSION]->(s:Session {id: sid}) RETURN a.id, b.id"
)
CREATE_NEXT = (
    "UNWIND $pairs AS p MATCH (a:Event {id: p[1]}), (b:Event {id: p[2]}) CREATE (a)-[:NEXT]->(b)"
)
DELETE_NEXT = (
    "UNWIND $pairs AS p MATCH (a:Event {id: p[1]})-[r:NEXT]->(b:Event {id: p[2]}) DELETE r"
)
MERGE_ENTITIES = (
    "UNWIND $rows AS r MERGE (n:Entity {name: r.name})"
    " SET n.type = r.type, n.display = r.display, n.aliases = r.aliases"
)
LINK_MENTIONS = (
    "UNWIND $pairs AS p MATCH (e:Event {id: p[1]}), (n:Entity {name: p[2]})"
    " MERGE (e)-[:MENTIONS]->(n)"
)
EVENT_MENTIONS = "MATCH (e:Event)-[:MENTIONS]->(n:Entity) WHERE e.id IN $ids RETURN e.id, n.name"
MERGE_RELATIONS = (
    "UNWIND $rows AS r MATCH (a:Entity {name: r.src}), (b:Entity {name: r.dst})"
    " MERGE (a)-[x:RELATED_TO {type: r.type, user_id: r.user_id, agent_id: r.agent_id}]->(b)"
    " ON CREATE SET x.weight = CAST(r.weight AS DOUBLE),"
    " x.valid_from = CAST(r.valid_from AS DOUBLE), x.valid_to = CAST(r.valid_to AS DOUBLE)"
    " ON MATCH SET x.weight = CAST(r.weight AS DOUBLE),"
    " x.valid_from = coalesce(CAST(r.valid_from AS DOUBLE), x.valid_from),"
    " x.valid_to = coalesce(CAST(r.valid_to AS DOUBLE), x.valid_to)"
)
_FACT_CASTS = {
    **dict.fromkeys(
        ("confidence", "created_at", "updated_at", "valid_from", "valid_to", "expires_at",
         "last_accessed", "success_rate", "said_at"),
        "DOUBLE",
    ),
    "steps": "STRING[]",
    "said_in": "STRING[]",
}  # fmt: skip
"""Explicit casts: a None in a parameter struct is typed STRING and will not cast implicitly,
and an empty list has no element type."""
MERGE_FACTS = "UNWIND $rows AS r MERGE (f:Fact {id: r.id}) SET " + ", ".join(
    f"f.{c} = CAST(r.{c} AS {_FACT_CASTS[c]})" if c in _FACT_CASTS else f"f.{c} = r.{c}"
    for c in FACT_COLUMNS
    if c != "id"
)
LINK_ABOUT = (
    "UNWIND $pairs AS p MATCH (f:Fact {id: p[1]}), (n:Entity {name: p[2]}) MERGE (f)-[:ABOUT]->(n)"
)
LINK_DERIVED = (
    "UNWIND $pairs AS p MATCH (f:Fact {id: p[1]}), (e:Event {id: p[2]})"
    " MERGE (f)-[:DERIVED_FROM]->(e)"
)
LINK_SUPERSEDES = (
    "UNWIND $pairs AS p MATCH (n:Fact {id: p[1]}), (o:Fact {id: p[2]}) MERGE (n)-[:SUPERSEDES]->(o)"
)
FACT_ABOUT = "MATCH (f:Fact)-[:ABOUT]->(n:Entity) WHERE f.id IN $ids RETURN f.id, n.name"
FACT_DERIVED = "MATCH (f:Fact)-[:DERIVED_FROM]->(e:Event) WHERE f.id IN $ids RETURN f.id, e.id"
# One fact by its primary key: an index lookup, where "f.id IN $ids" scans the whole table.
FACT_BY_ID = f"MATCH (f:Fact {{id: $id}}) RETURN {FACT_RETURN}"
# Both kinds of a fact's links in one query: an Entity's key is its name, an Event's its id.
FACT_LINKS_ONE = (
    "MATCH (f:Fact {id: $id})-[r:ABOUT|DERIVED_FROM]->(n) RETURN label(r), n.name, n.id"
)
FACT_COUNT = "MATCH (f:Fact) RETURN count(*)"


_LOAD_CHUNK = 10_000
"""Rows per Arrow chunk when loading vectors: bounds the transient copies."""

TOUCH = {
    table: f"MATCH (n:{table} {{id: $id}})"
    " SET n.access_count = coalesce(n.access_count, 0) + 1, n.last_accessed = $at RETURN n.id"
    for table in ("Event", "Fact")
}
"""Count one access; by primary key, so one statement per id (see ``execute_each``)."""

# Prepared statements belong to their connection; weak keys let closed connections go.
_STATEMENTS: weakref.WeakKeyDictionary[kuzu.Connection, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def execute_each(
    conn: kuzu.Connection, query: str, params: Iterable[dict[str, Any]]
) -> list[list[Any]]:
    """Run ``query`` once per parameter set through one prepared statement; all rows.

    Measured at 100k events: touching 10 ids in both node tables took 16-33 ms as plain
    statements and 7-12 ms prepared (Kuzu parses and plans every plain statement anew).
    """
    cache = _STATEMENTS.setdefault(conn, {})
    rows: list[list[Any]] = []
    try:
        statement = cache.get(query)
        if statement is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # kuzu marks prepare()
                statement = cache[query] = conn.prepare(query)
        for values in params:
            result = conn.execute(statement, values)
            first = result[0] if isinstance(result, list) else result
            rows += [list(row) for row in first.get_all()]
    except RuntimeError as exc:
        raise StorageError(f"graph store query failed: {exc}") from exc
    return rows


def prepared(conn: kuzu.Connection, query: str, params: dict[str, Any]) -> list[list[Any]]:
    """Rows of ``query`` through the connection's prepared statement (0.3-0.6 ms less per
    call than a plain statement, which Kuzu parses and plans every time)."""
    return execute_each(conn, query, [params])


def event_row(event: EventRecord) -> dict[str, Any]:
    return {column: getattr(event, column) for column in EVENT_COLUMNS}


def event_from_row(row: Sequence[Any]) -> EventRecord:
    values = dict(zip(EVENT_COLUMNS, row, strict=True))
    values["segment_type"] = cast(SegmentType, values["segment_type"])
    values["summary"] = values["summary"] or ""
    return EventRecord(**values)


def events_arrow(events: Sequence[EventRecord]) -> pa.Table:
    """A pyarrow table laid out exactly like the Event node table, for ``COPY Event FROM``."""
    columns: dict[str, pa.Array] = {}
    for name in EVENT_COLUMNS[:-1]:
        values = [getattr(e, name) for e in events]
        columns[name] = pa.array(values, type=_arrow_type(name))
    columns["access_count"] = pa.array([0] * len(events), type=pa.int64())
    columns["last_accessed"] = pa.nulls(len(events), type=pa.float64())
    columns["derived"] = pa.array([e.derived for e in events], type=pa.string())
    return pa.table(columns)


def _arrow_type(column: str) -> pa.DataType:
    if column == "ts":
        return pa.float64()
    if column in ("iteration", "segment"):
        return pa.int64()
    return pa.string()


def in_session_arrow(events: Sequence[EventRecord]) -> pa.Table:
    return pa.table({"from": [e.id for e in events], "to": [e.session_id for e in events]})


def pairs_arrow(pairs: Sequence[Sequence[str]]) -> pa.Table:
    return pa.table({"from": [p[0] for p in pairs], "to": [p[1] for p in pairs]})


def vectors_arrow(vectors: Sequence[tuple[str, list[float]]], dimension: int) -> pa.Table:
    flat = pa.array([x for _, v in vectors for x in v], type=pa.float32())
    return pa.table(
        {
            "id": pa.array([i for i, _ in vectors], type=pa.string()),
            "embedding": pa.FixedSizeListArray.from_arrays(flat, dimension),
        }
    )


def load_vectors(
    conn: kuzu.Connection, table: str, dimension: int
) -> tuple[list[str], npt.NDArray[np.float32]]:
    """Every row of a vector side table as (ids, one float32 matrix), through Arrow.

    Measured at 100k x 384: ``get_all()`` builds a Python float per component and took
    18 s and +2 GB of memory; Arrow in one chunk 5.6 s and +1.1 GB; Arrow in chunks of
    10k rows copied into one preallocated matrix about 2-4 s and +0.5 GB.
    """
    import numpy as np

    try:
        result = conn.execute(f"MATCH (v:{table}) RETURN v.id, v.embedding")
        first = result[0] if isinstance(result, list) else result
        arrow = first.get_as_arrow(chunk_size=_LOAD_CHUNK)
    except RuntimeError as exc:
        raise StorageError(f"graph store query failed: {exc}") from exc
    ids = [str(i) for i in arrow.column(0).to_pylist()]
    matrix = np.empty((len(ids), dimension), dtype=np.float32)
    row = 0
    for chunk in arrow.column(1).chunks:
        values = chunk.flatten().to_numpy(zero_copy_only=False).reshape(-1, dimension)
        matrix[row : row + len(values)] = values
        row += len(values)
    return ids, matrix


def fact_links(conn: kuzu.Connection, ids: list[str]) -> dict[str, tuple[list[str], list[str]]]:
    """Fact id -> (entity names it is about, event ids it was derived from).

    Two plain pattern queries: one query with two OPTIONAL MATCH + collect took 26-34 ms
    for 5 facts among 2,000 (8 ms on an empty table), these take 1-3 ms each.
    """
    links: dict[str, tuple[list[str], list[str]]] = {i: ([], []) for i in ids}
    for fact_id, name in prepared(conn, FACT_ABOUT, {"ids": ids}):
        links[str(fact_id)][0].append(str(name))
    for fact_id, event_id in prepared(conn, FACT_DERIVED, {"ids": ids}):
        links[str(fact_id)][1].append(str(event_id))
    return links


def facts_by_key(conn: kuzu.Connection, ids: list[str]) -> list[FactRecord]:
    """These facts read one by one through the primary-key index, with their links: each
    costs ~1 ms whatever the table's size (two queries), where one ``IN`` query scans the
    whole table (~0.7 ms per 1,000 facts: 36 ms beside 50,000 facts for any number of ids)."""
    found: list[FactRecord] = []
    for fact_id in ids:
        rows = prepared(conn, FACT_BY_ID, {"id": fact_id})
        if not rows:
            continue
        about: list[str] = []
        derived: list[str] = []
        for link, name, event_id in prepared(conn, FACT_LINKS_ONE, {"id": fact_id}):
            if link == "ABOUT":
                about.append(str(name))
            else:
                derived.append(str(event_id))
        found.append(fact_from_row(rows[0], about, derived))
    return found


def fact_row(fact: FactRecord) -> dict[str, Any]:
    return {column: getattr(fact, column) for column in FACT_COLUMNS}


def fact_from_row(row: Sequence[Any], entities: list[str], sources: list[str]) -> FactRecord:
    values = dict(zip(FACT_COLUMNS, row, strict=True))
    values["kind"] = cast(FactKind, values["kind"])
    values["scope"] = cast(Scope, values["scope"])
    values["status"] = cast(FactStatus, values["status"])
    values["tier"] = cast(Tier, values["tier"])
    values["access_count"] = int(values["access_count"] or 0)
    values["usage_count"] = int(values["usage_count"] or 0)
    values["evidence_count"] = int(values["evidence_count"] or 1)
    values["steps"] = list(values["steps"] or [])
    values["said_in"] = list(values["said_in"] or [])
    for text_column in ("workspace_id", "trigger", "anchor", "source", "conflicts_with"):
        values[text_column] = values[text_column] or ""
    values["workspace_id"] = values["workspace_id"] or "default"
    return FactRecord(**values, entities=entities, source_events=sources)


def entity_from_row(row: Sequence[Any]) -> EntityRecord:
    return EntityRecord(
        name=str(row[0]), type=str(row[1]), display=row[2] or "", aliases=list(row[3] or [])
    )


def entities_by_name(conn: kuzu.Connection, names: list[str]) -> list[EntityRecord]:
    rows = prepared(
        conn,
        "MATCH (n:Entity) WHERE n.name IN $names"
        " RETURN n.name, n.type, n.display, n.aliases ORDER BY n.name",
        {"names": names},
    )
    return [entity_from_row(r) for r in rows]


def entity_names(conn: kuzu.Connection) -> list[tuple[str, list[str]]]:
    """Every entity's name and aliases (see :mod:`shiyi.memory.kuzu.entity_names`)."""
    rows = prepared(conn, "MATCH (n:Entity) RETURN n.name, n.aliases", {})
    return [(str(name), [str(a) for a in aliases or []]) for name, aliases in rows]


def merged_entity(old: EntityRecord | None, new: EntityRecord) -> dict[str, Any]:
    """Resolution keeps every alias ever seen and prefers a specific type over 'concept'."""
    if old is None:
        return {
            "name": new.name,
            "type": new.type,
            "display": new.display,
            "aliases": _uniq(new.aliases),
        }
    kind = old.type if new.type == "concept" and old.type != "concept" else new.type
    return {
        "name": new.name,
        "type": kind,
        "display": new.display or old.display,
        "aliases": _uniq([*old.aliases, *new.aliases]),
    }


def _uniq(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def chain_order(rows: Iterable[Sequence[Any]]) -> dict[str, list[str]]:
    """Session id -> its event ids in (ts, iteration, segment, id) order."""
    by_session: dict[str, list[tuple[float, int, int, str]]] = {}
    for sid, eid, ts, iteration, segment in rows:
        by_session.setdefault(sid, []).append((ts, iteration, segment, eid))
    return {sid: [key[3] for key in sorted(keys)] for sid, keys in by_session.items()}
