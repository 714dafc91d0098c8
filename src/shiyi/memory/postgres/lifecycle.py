"""Lifecycle reads on PostgreSQL: slot candidates for dedup and conflicts, health aggregates
and the id sets that ``forget`` deletes (the embedded twin: :mod:`shiyi.memory.kuzu.lifecycle`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shiyi.memory.postgres.schema import Conn


def _ids(conn: Conn, query: str, params: Sequence[Any] | dict[str, Any]) -> list[str]:
    return [str(row[0]) for row in conn.execute(query, params).fetchall()]


def slot_candidates(
    conn: Conn,
    entity_names: Sequence[str],
    keys: Sequence[str],
    statuses: Sequence[str],
    user_id: str = "",
) -> list[str]:
    """Ids of facts that could be the same slot: about one of these entities, or with one
    of these keys (facts about nothing in particular are matched by key alone); only
    ``user_id``'s when given."""
    found: dict[str, None] = {}
    # "" matches every user: the filter is off unless a user is named
    mine = (user_id, user_id)
    if entity_names:
        found.update(dict.fromkeys(_ids(
            conn,
            "SELECT f.id FROM facts AS f JOIN about AS a ON a.fact_id = f.id"
            " WHERE a.entity = ANY(%s) AND f.status = ANY(%s) AND (%s = '' OR f.user_id = %s)"
            " GROUP BY f.id ORDER BY min(a.seq)",
            (list(entity_names), list(statuses), *mine),
        )))  # fmt: skip
    if keys:
        found.update(dict.fromkeys(_ids(
            conn,
            'SELECT id FROM facts WHERE "key" = ANY(%s) AND status = ANY(%s)'
            " AND (%s = '' OR user_id = %s) ORDER BY id",
            (list(keys), list(statuses), *mine),
        )))  # fmt: skip
    return list(found)


def mentioned_entities(conn: Conn, event_ids: Sequence[str]) -> list[str]:
    return _ids(
        conn,
        "SELECT DISTINCT entity FROM mentions WHERE event_id = ANY(%s) ORDER BY entity",
        (list(event_ids),),
    )


def supersedes(conn: Conn, fact_ids: Sequence[str]) -> dict[str, list[str]]:
    """Newer fact id -> the ids of the facts it replaced directly."""
    rows = conn.execute(
        "SELECT newer, older FROM supersedes WHERE newer = ANY(%s) ORDER BY seq",
        (list(fact_ids),),
    ).fetchall()
    replaced: dict[str, list[str]] = {}
    for new, old in rows:
        replaced.setdefault(str(new), []).append(str(old))
    return replaced


def superseded_by(conn: Conn, fact_ids: Sequence[str]) -> dict[str, str]:
    """Older fact id -> the id of the fact that replaced it."""
    rows = conn.execute(
        "SELECT older, newer FROM supersedes WHERE older = ANY(%s) ORDER BY seq",
        (list(fact_ids),),
    ).fetchall()
    return {str(old): str(new) for old, new in rows}


def session_window(
    conn: Conn, session_id: str, until: float, types: Sequence[str], limit: int
) -> list[str]:
    """Ids of the newest ``limit`` events of these types at or before ``until``, newest first."""
    return _ids(
        conn,
        "SELECT id FROM events WHERE session_id = %s AND ts <= %s AND segment_type = ANY(%s)"
        " AND derived = ''"
        " ORDER BY ts DESC, iteration DESC, segment DESC, id DESC LIMIT %s",
        (session_id, until, list(types), max(limit, 0)),
    )


def facts_derived_from(conn: Conn, event_ids: Sequence[str]) -> list[str]:
    """Distinct fact ids, in the order of the events asked for."""
    rows = _ids(
        conn,
        "SELECT d.fact_id FROM unnest(%s::text[]) WITH ORDINALITY AS e(id, n)"
        " JOIN derived_from AS d ON d.event_id = e.id ORDER BY e.n, d.seq",
        (list(event_ids),),
    )
    return list(dict.fromkeys(rows))


def fact_groups(conn: Conn) -> list[tuple[str, str, str, str, int, float]]:
    rows = conn.execute(
        "SELECT kind, tier, scope, status, count(*), avg(confidence) FROM facts"
        " GROUP BY kind, tier, scope, status ORDER BY kind, tier, scope, status"
    ).fetchall()
    return [
        (str(k), str(t), str(s), str(st), int(c), float(a or 0.0)) for k, t, s, st, c, a in rows
    ]


def open_conflicts(conn: Conn) -> int:
    row = conn.execute(
        "SELECT count(*) FROM facts WHERE status = 'pending' AND conflicts_with <> ''"
    ).fetchone()
    return int(row[0]) if row else 0


def facts_by_status(conn: Conn, statuses: Sequence[str], limit: int) -> list[str]:
    return _ids(
        conn,
        "SELECT id FROM facts WHERE status = ANY(%s)"
        " ORDER BY updated_at DESC NULLS LAST, id LIMIT %s",
        (list(statuses), max(limit, 0)),
    )


def entity_footprint(conn: Conn, name: str) -> tuple[list[str], list[str]]:
    """(fact ids ABOUT, event ids MENTIONING) the entity: what forgetting it removes."""
    facts = _ids(conn, "SELECT fact_id FROM about WHERE entity = %s ORDER BY seq", (name,))
    events = _ids(conn, "SELECT event_id FROM mentions WHERE entity = %s ORDER BY seq", (name,))
    return facts, events


def latest_facts(conn: Conn, user_id: str, limit: int) -> list[str]:
    return _ids(
        conn,
        "SELECT id FROM facts WHERE user_id = %s AND status = 'active'"
        " ORDER BY created_at DESC NULLS LAST, id LIMIT %s",
        (user_id, max(limit, 0)),
    )


def user_footprint(conn: Conn, user_id: str) -> tuple[list[str], list[str]]:
    facts = _ids(conn, "SELECT id FROM facts WHERE user_id = %s ORDER BY id", (user_id,))
    events = _ids(conn, "SELECT id FROM events WHERE user_id = %s ORDER BY id", (user_id,))
    return facts, events
