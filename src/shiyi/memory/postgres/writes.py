"""Writes of the PostgreSQL store; each function runs inside the caller's transaction.

Batches go in as arrays (``unnest``) in one statement.  Edges are inserted only where both
ends exist and ``ON CONFLICT DO NOTHING`` makes repeats no-ops, which is what the embedded
store's ``MATCH ... MERGE`` does.  Rows about to be updated by counters are locked in id
order, so concurrent writers cannot deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence

from shiyi.errors import StorageError
from shiyi.memory.models import EntityRecord, EventRecord, FactRecord, NodeKind, RelationRecord
from shiyi.memory.postgres import keywords
from shiyi.memory.postgres.rows import (
    EVENT_COLUMNS,
    FACT_COLUMNS,
    column_list,
    entity_from_row,
    event_values,
    fact_values,
    merged_entity,
    vector_literal,
)
from shiyi.memory.postgres.schema import VECTOR_TABLES, Conn
from shiyi.memory.scopes import owner_of
from shiyi.memory.text.contextual import indexed_texts

_EVENT_TYPES = {"ts": "float8", "iteration": "int8", "segment": "int8"}
_EVENT_ARRAYS = ", ".join("%s::" + _EVENT_TYPES.get(c, "text") + "[]" for c in EVENT_COLUMNS)
_INSERT_EVENTS = (
    f"INSERT INTO events ({column_list(EVENT_COLUMNS)}) SELECT * FROM unnest({_EVENT_ARRAYS})"
    " ON CONFLICT (id) DO NOTHING RETURNING id"
)
_UPSERT_FACT = (
    f"INSERT INTO facts ({column_list(FACT_COLUMNS)})"
    f" VALUES ({', '.join(['%s'] * len(FACT_COLUMNS))})"
    " ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f'"{c}" = excluded."{c}"' for c in FACT_COLUMNS if c != "id")
)
_KEY = {"event": "id", "fact": "id", "entity": "name"}


def add_events(conn: Conn, events: Sequence[EventRecord]) -> list[EventRecord]:
    """Insert events whose id is new (the first of a repeated id in the batch wins), their
    sessions and keyword documents; returns the events actually inserted."""
    unique = list({e.id: e for e in reversed(events)}.values())[::-1]
    if not unique:
        return []
    _add_sessions(conn, unique)
    columns = list(zip(*(event_values(e) for e in unique), strict=True))
    rows = conn.execute(_INSERT_EVENTS, [list(c) for c in columns]).fetchall()
    inserted = {str(r[0]) for r in rows}
    new = [e for e in unique if e.id in inserted]
    _index_events(conn, new)
    return new


def copy_events(conn: Conn, events: Sequence[EventRecord]) -> list[EventRecord]:
    """:func:`add_events` for large batches: rows stream in through ``COPY`` to a staging
    table, then move over (ids already present skipped, so a re-run is safe)."""
    unique = list({e.id: e for e in reversed(events)}.values())[::-1]
    if not unique:
        return []
    _add_sessions(conn, unique)
    columns = column_list(EVENT_COLUMNS)
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS staging_events"
        f" AS SELECT {columns} FROM events WITH NO DATA"
    )
    conn.execute("TRUNCATE staging_events")
    with conn.cursor().copy(f"COPY staging_events ({columns}) FROM STDIN") as copy:
        for event in unique:
            copy.write_row(event_values(event))
    rows = conn.execute(
        f"INSERT INTO events ({columns}) SELECT {columns} FROM staging_events"
        " ON CONFLICT (id) DO NOTHING RETURNING id"
    ).fetchall()
    inserted = {str(r[0]) for r in rows}
    new = [e for e in unique if e.id in inserted]
    _index_events(conn, new)
    return new


def _index_events(conn: Conn, events: list[EventRecord]) -> None:
    texts = indexed_texts(events)
    owners = {e.id: owner_of(e) for e in events}
    keywords.index(conn, [(e.id, "event", t) for e, t in zip(events, texts, strict=True)], owners)


def _add_sessions(conn: Conn, events: list[EventRecord]) -> None:
    """A session is created by its earliest event (of this batch); never changed after."""
    first: dict[str, EventRecord] = {}
    for event in sorted(events, key=lambda e: e.ts):
        first.setdefault(event.session_id, event)
    conn.execute(
        "INSERT INTO sessions (id, created_at, user_id, agent_id)"
        " SELECT * FROM unnest(%s::text[], %s::float8[], %s::text[], %s::text[])"
        " ORDER BY 1 ON CONFLICT (id) DO NOTHING",
        (
            list(first),
            [e.ts for e in first.values()],
            [e.user_id for e in first.values()],
            [e.agent_id for e in first.values()],
        ),
    )


def set_embeddings(
    conn: Conn, node: NodeKind, vectors: Sequence[tuple[str, list[float]]], dimension: int
) -> None:
    """Store vectors of existing nodes (others are ignored); the last of a repeated id wins."""
    latest = dict(vectors)
    bad = [i for i, v in latest.items() if len(v) != dimension]
    if bad:
        raise StorageError(f"vectors for {bad[:3]} have the wrong dimension (expected {dimension})")
    if not latest:
        return
    table, key = VECTOR_TABLES[node], _KEY[node]
    ids = list(latest)
    # Order numbers in the given order; a node embedded again keeps its first one.
    order = conn.execute(
        "SELECT nextval('embedding_order') FROM generate_series(1, %s)", (len(ids),)
    ).fetchall()
    conn.execute(
        f"UPDATE {table} AS t SET embedding = v.embedding::vector,"
        " embedded_order = coalesce(t.embedded_order, v.n)"
        " FROM unnest(%s::text[], %s::text[], %s::int8[]) AS v(id, embedding, n)"
        f" WHERE t.{key} = v.id",
        (ids, [vector_literal(latest[i]) for i in ids], [int(r[0]) for r in order]),
    )


def upsert_entities(conn: Conn, entities: Sequence[EntityRecord]) -> None:
    """Merge into existing entities: aliases accumulate, a specific type beats 'concept'."""
    if not entities:
        return
    names = sorted({e.name for e in entities})
    rows = conn.execute(
        "SELECT name, type, display, aliases FROM entities WHERE name = ANY(%s)"
        " ORDER BY name FOR UPDATE",
        (names,),
    ).fetchall()
    merged: dict[str, EntityRecord] = {r[0]: entity_from_row(r) for r in rows}
    for entity in entities:
        merged[entity.name] = merged_entity(merged.get(entity.name), entity)
    # One row per entity: a text[] per row cannot ride in an unnest of arrays.
    with conn.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO entities (name, type, display, aliases) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (name) DO UPDATE SET type = excluded.type,"
            " display = excluded.display, aliases = excluded.aliases",
            [(e.name, e.type, e.display, e.aliases) for _, e in sorted(merged.items())],
        )


def link_mentions(conn: Conn, pairs: Sequence[tuple[str, str]]) -> None:
    """(event id, entity) edges whose two ends exist, each with its event's owner."""
    unique = list(dict.fromkeys(pairs))
    if unique:
        conn.execute(
            "INSERT INTO mentions (event_id, entity, user_id, agent_id)"
            " SELECT p.a, p.b, e.user_id, e.agent_id"
            " FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS p(a, b, n)"
            " JOIN events AS e ON e.id = p.a"
            " WHERE EXISTS (SELECT 1 FROM entities WHERE name = p.b)"
            " ORDER BY p.n ON CONFLICT DO NOTHING",
            ([p[0] for p in unique], [p[1] for p in unique]),
        )


def add_about(conn: Conn, pairs: Sequence[tuple[str, str]]) -> None:
    _link(conn, "about", ("fact_id", "entity"), ("facts", "entities"), pairs)


def add_derived(conn: Conn, pairs: Sequence[tuple[str, str]]) -> None:
    _link(conn, "derived_from", ("fact_id", "event_id"), ("facts", "events"), pairs)


def add_supersedes(conn: Conn, pairs: Sequence[tuple[str, str]]) -> None:
    _link(conn, "supersedes", ("newer", "older"), ("facts", "facts"), pairs)


_NODE_KEY = {"events": "id", "facts": "id", "entities": "name"}


def _link(
    conn: Conn,
    table: str,
    columns: tuple[str, str],
    ends: tuple[str, str],
    pairs: Sequence[tuple[str, str]],
) -> None:
    """Insert edges whose two ends exist, in the given order (``seq`` keeps it)."""
    if not pairs:
        return
    (a, b), (ta, tb) = columns, ends
    conn.execute(
        f"INSERT INTO {table} ({a}, {b}) SELECT p.a, p.b"
        " FROM unnest(%s::text[], %s::text[]) WITH ORDINALITY AS p(a, b, n)"
        f" WHERE EXISTS (SELECT 1 FROM {ta} WHERE {_NODE_KEY[ta]} = p.a)"
        f" AND EXISTS (SELECT 1 FROM {tb} WHERE {_NODE_KEY[tb]} = p.b)"
        " ORDER BY p.n ON CONFLICT DO NOTHING",
        ([p[0] for p in pairs], [p[1] for p in pairs]),
    )


def add_relations(conn: Conn, relations: Sequence[RelationRecord]) -> None:
    """RELATED_TO edges between existing entities; a repeat updates the weight and fills in
    validity bounds it did not have.  Each owner has its own edge (see RelationRecord); the
    last of a repeated (src, dst, type, owner) wins."""
    latest = {(r.src, r.dst, r.type, r.user_id, r.agent_id): r for r in relations}
    if not latest:
        return
    rows = list(latest.values())
    conn.execute(
        "INSERT INTO relations (src, dst, type, weight, valid_from, valid_to, user_id, agent_id)"
        " SELECT r.src, r.dst, r.type, r.weight, r.valid_from, r.valid_to, r.u, r.a"
        " FROM unnest(%s::text[], %s::text[], %s::text[], %s::float8[], %s::float8[],"
        " %s::float8[], %s::text[], %s::text[])"
        " WITH ORDINALITY AS r(src, dst, type, weight, valid_from, valid_to, u, a, n)"
        " WHERE EXISTS (SELECT 1 FROM entities WHERE name = r.src)"
        " AND EXISTS (SELECT 1 FROM entities WHERE name = r.dst) ORDER BY r.n"
        " ON CONFLICT (src, dst, type, user_id, agent_id) DO UPDATE SET weight = excluded.weight,"
        " valid_from = coalesce(excluded.valid_from, relations.valid_from),"
        " valid_to = coalesce(excluded.valid_to, relations.valid_to)",
        (
            [r.src for r in rows],
            [r.dst for r in rows],
            [r.type for r in rows],
            [float(r.weight) for r in rows],
            [r.valid_from for r in rows],
            [r.valid_to for r in rows],
            [r.user_id for r in rows],
            [r.agent_id for r in rows],
        ),
    )


def upsert_facts(conn: Conn, facts: Sequence[FactRecord]) -> None:
    """Every column is replaced by the record's; ABOUT and DERIVED_FROM edges are added (to
    existing entities and events), never removed, as in the embedded store."""
    latest = {f.id: f for f in facts}
    if not latest:
        return
    with conn.cursor() as cursor:
        cursor.executemany(_UPSERT_FACT, [fact_values(f) for f in latest.values()])
    add_about(conn, [(f.id, n) for f in facts for n in dict.fromkeys(f.entities)])
    add_derived(conn, [(f.id, e) for f in facts for e in dict.fromkeys(f.source_events)])
    keywords.index(
        conn, [(f.id, "fact", f.text) for f in facts], {f.id: owner_of(f) for f in facts}
    )


def touch(conn: Conn, ids: Sequence[str], at: float) -> None:
    """access_count + 1 and last_accessed for each event or fact id (once per id)."""
    wanted = sorted(set(ids))
    if not wanted:
        return
    for table in ("events", "facts"):
        conn.execute(
            f"UPDATE {table} AS t SET access_count = t.access_count + 1, last_accessed = %s"
            f" FROM (SELECT id FROM {table} WHERE id = ANY(%s) ORDER BY id FOR UPDATE) AS l"
            " WHERE t.id = l.id",
            (at, wanted),
        )


def delete(conn: Conn, ids: Sequence[str]) -> int:
    """Events and facts with their edges (cascading), vectors and keyword documents."""
    wanted = sorted(set(ids))
    if not wanted:
        return 0
    removed = 0
    for table in ("events", "facts"):
        removed += conn.execute(f"DELETE FROM {table} WHERE id = ANY(%s)", (wanted,)).rowcount
    keywords.delete(conn, wanted)
    return removed


def delete_entities(conn: Conn, names: Sequence[str]) -> int:
    """Entities with their MENTIONS, ABOUT and RELATED_TO edges and vectors."""
    wanted = sorted(set(names))
    if not wanted:
        return 0
    return conn.execute("DELETE FROM entities WHERE name = ANY(%s)", (wanted,)).rowcount


def delete_orphan_sessions(conn: Conn, user_id: str) -> int:
    return conn.execute(
        "DELETE FROM sessions AS s WHERE s.user_id = %s"
        " AND NOT EXISTS (SELECT 1 FROM events AS e WHERE e.session_id = s.id)",
        (user_id,),
    ).rowcount


def expire_facts(conn: Conn, now: float) -> list[str]:
    rows = conn.execute(
        "UPDATE facts SET status = 'expired', updated_at = %(now)s"
        " WHERE tier = 'short' AND status IN ('active', 'pending')"
        " AND expires_at IS NOT NULL AND expires_at <= %(now)s RETURNING id",
        {"now": now},
    ).fetchall()
    return [str(r[0]) for r in rows]


def set_event_access(conn: Conn, rows: Sequence[tuple[str, int, float | None]]) -> None:
    """Absolute access counts (a migration copies them; re-running sets the same values)."""
    if rows:
        conn.execute(
            "UPDATE events AS e SET access_count = r.n, last_accessed = r.at"
            " FROM unnest(%s::text[], %s::int8[], %s::float8[]) AS r(id, n, at)"
            " WHERE e.id = r.id",
            ([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]),
        )


def upsert_sessions(conn: Conn, rows: Sequence[tuple[str, str, float | None, str, str]]) -> None:
    """(id, title, created_at, user_id, agent_id) of sessions, created or overwritten."""
    if rows:
        columns = [list(c) for c in zip(*rows, strict=True)]
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, user_id, agent_id)"
            " SELECT * FROM unnest(%s::text[], %s::text[], %s::float8[], %s::text[], %s::text[])"
            " ON CONFLICT (id) DO UPDATE SET title = excluded.title,"
            " created_at = excluded.created_at, user_id = excluded.user_id,"
            " agent_id = excluded.agent_id",
            columns,
        )
