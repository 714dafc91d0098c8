"""Cypher for the memory lifecycle: slot lookups for dedup and conflicts, expiry, health
aggregates and the id sets that ``forget`` deletes.  Runs on a connection of
:class:`shiyi.memory.kuzu.connection.KuzuGraph` (readers or the write transaction)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import kuzu

from shiyi.memory.kuzu.schema import execute, lookup

FACTS_ABOUT = (
    "MATCH (f:Fact)-[:ABOUT]->(n:Entity) WHERE n.name IN $names AND f.status IN $statuses"
    " RETURN DISTINCT f.id"
)
FACTS_WITH_KEY = "MATCH (f:Fact) WHERE f.key IN $keys AND f.status IN $statuses RETURN f.id"
FACTS_ABOUT_OF = (
    "MATCH (f:Fact)-[:ABOUT]->(n:Entity) WHERE n.name IN $names AND f.status IN $statuses"
    " AND f.user_id = $user RETURN DISTINCT f.id"
)
FACTS_WITH_KEY_OF = (
    "MATCH (f:Fact) WHERE f.key IN $keys AND f.status IN $statuses AND f.user_id = $user"
    " RETURN f.id"
)
MENTIONED_BY = "MATCH (e:Event {id: $id})-[:MENTIONS]->(n:Entity) RETURN n.name"
EXPIRE = (
    "MATCH (f:Fact) WHERE f.tier = 'short' AND f.status IN ['active', 'pending']"
    " AND f.expires_at IS NOT NULL AND f.expires_at <= $now"
    " SET f.status = 'expired', f.updated_at = $now RETURN f.id"
)
FACT_GROUPS = "MATCH (f:Fact) RETURN f.kind, f.tier, f.scope, f.status, count(*), avg(f.confidence)"
OPEN_CONFLICTS = (
    "MATCH (f:Fact) WHERE f.status = 'pending' AND f.conflicts_with <> '' RETURN count(*)"
)
SUPERSEDED_BY = "MATCH (n:Fact)-[:SUPERSEDES]->(o:Fact) WHERE o.id IN $ids RETURN o.id, n.id"
SUPERSEDES = "MATCH (n:Fact)-[:SUPERSEDES]->(o:Fact) WHERE n.id IN $ids RETURN n.id, o.id"
SUPERSEDES_CHAIN = "MATCH (n:Fact)-[:SUPERSEDES*1..20]->(o:Fact) WHERE n.id = $id RETURN o.id"
ENTITY_FACTS = "MATCH (f:Fact)-[:ABOUT]->(n:Entity {name: $name}) RETURN f.id"
ENTITY_EVENTS = "MATCH (e:Event)-[:MENTIONS]->(n:Entity {name: $name}) RETURN e.id"
USER_FACTS = "MATCH (f:Fact) WHERE f.user_id = $user RETURN f.id"
LATEST_FACTS = (
    "MATCH (f:Fact) WHERE f.user_id = $user AND f.status = 'active'"
    " RETURN f.id ORDER BY f.created_at DESC, f.id LIMIT $n"
)
USER_EVENTS = "MATCH (e:Event) WHERE e.user_id = $user RETURN e.id"
DELETE_ENTITY = "MATCH (n:Entity {name: $name}) DETACH DELETE n"
DELETE_ENTITY_VEC = "MATCH (v:EntityVec {id: $name}) DELETE v"
ORPHAN_SESSIONS = (
    "MATCH (s:Session) WHERE NOT EXISTS { MATCH (:Event)-[:IN_SESSION]->(s) }"
    " AND s.user_id = $user RETURN s.id"
)
DELETE_SESSIONS = "MATCH (s:Session) WHERE s.id IN $ids DETACH DELETE s"
# From the session by primary key along IN_SESSION: a filter on Event.session_id would scan
# every event of every session.
SESSION_WINDOW = (
    "MATCH (e:Event)-[:IN_SESSION]->(s:Session {id: $sid})"
    " WHERE e.ts <= $until AND e.segment_type IN $types AND e.derived = ''"
    " RETURN e.id ORDER BY e.ts DESC, e.iteration DESC, e.segment DESC LIMIT $n"
)
DERIVED_FROM_EVENT = "MATCH (f:Fact)-[:DERIVED_FROM]->(e:Event {id: $id}) RETURN f.id"
FACTS_BY_STATUS = (
    "MATCH (f:Fact) WHERE f.status IN $statuses RETURN f.id ORDER BY f.updated_at DESC LIMIT $n"
)


def ids(conn: kuzu.Connection, query: str, params: dict[str, Any]) -> list[str]:
    return [str(row[0]) for row in execute(conn, query, params)]


def ids_per_key(conn: kuzu.Connection, query: str, keys: Sequence[str]) -> list[str]:
    """Distinct first-column values of ``query`` (one ``$id``) over ``keys``, by primary key."""
    return list(dict.fromkeys(str(row[0]) for row in lookup(conn, query, list(keys))))


def slot_candidates(
    conn: kuzu.Connection,
    entity_names: Sequence[str],
    keys: Sequence[str],
    statuses: Sequence[str],
    user_id: str = "",
) -> list[str]:
    """Ids of facts that could be the same slot: about one of these entities, or with one
    of these keys (facts about nothing in particular are matched by key alone); only
    ``user_id``'s when given."""
    found: dict[str, None] = {}
    mine = {"user": user_id} if user_id else {}
    if entity_names:
        params = {"names": list(entity_names), "statuses": list(statuses), **mine}
        found.update(dict.fromkeys(ids(conn, FACTS_ABOUT_OF if user_id else FACTS_ABOUT, params)))
    if keys:
        params = {"keys": list(keys), "statuses": list(statuses), **mine}
        found.update(
            dict.fromkeys(ids(conn, FACTS_WITH_KEY_OF if user_id else FACTS_WITH_KEY, params))
        )
    return list(found)


def fact_groups(conn: kuzu.Connection) -> list[tuple[str, str, str, str, int, float]]:
    rows = execute(conn, FACT_GROUPS)
    return [
        (str(k), str(t), str(s), str(st), int(c), float(a or 0.0)) for k, t, s, st, c, a in rows
    ]


def supersedes(conn: kuzu.Connection, fact_ids: Sequence[str]) -> dict[str, list[str]]:
    """Newer fact id -> the ids of the facts it replaced directly."""
    replaced: dict[str, list[str]] = {}
    for new, old in execute(conn, SUPERSEDES, {"ids": list(fact_ids)}):
        replaced.setdefault(str(new), []).append(str(old))
    return replaced


def superseded_by(conn: kuzu.Connection, fact_ids: Sequence[str]) -> dict[str, str]:
    """Older fact id -> the id of the fact that replaced it."""
    rows = execute(conn, SUPERSEDED_BY, {"ids": list(fact_ids)})
    return {str(old): str(new) for old, new in rows}
