"""Counts of what one viewer may read (the server's ``/v1/memory/health``; issue 29: store-wide
counts let one user watch another's activity).  The rules are :class:`Viewer`'s."""

from __future__ import annotations

import kuzu

from shiyi.memory.kuzu.schema import execute
from shiyi.memory.models import VisibleCounts
from shiyi.memory.scopes import Viewer

_FACT_SEEN = (
    "((f.scope = 'workspace' AND f.workspace_id = $w)"
    " OR (f.scope = 'agent' AND f.user_id = $u AND f.agent_id = $a)"
    " OR (f.scope <> 'workspace' AND f.scope <> 'agent' AND f.user_id = $u))"
)
_EVENT_SEEN = "e.user_id = $u AND e.agent_id = $a"
_RELATION_SEEN = "((r.user_id = $u AND r.agent_id = $a) OR ($legacy AND r.user_id = ''))"
FACT_GROUPS = (
    f"MATCH (f:Fact) WHERE {_FACT_SEEN}"
    " RETURN f.kind, f.tier, f.scope, f.status, count(*), avg(f.confidence)"
)
OPEN_CONFLICTS = (
    f"MATCH (f:Fact) WHERE {_FACT_SEEN} AND f.status = 'pending' AND f.conflicts_with <> ''"
    " RETURN count(*)"
)
EVENTS = f"MATCH (e:Event) WHERE {_EVENT_SEEN} RETURN count(e)"
RELATIONS = f"MATCH ()-[r:RELATED_TO]->() WHERE {_RELATION_SEEN} RETURN count(r)"
NAMED = (
    f"MATCH (e:Event)-[:MENTIONS]->(n:Entity) WHERE {_EVENT_SEEN} RETURN DISTINCT n.name",
    f"MATCH (f:Fact)-[:ABOUT]->(n:Entity) WHERE {_FACT_SEEN} RETURN DISTINCT n.name",
    f"MATCH (n:Entity)-[r:RELATED_TO]->(m:Entity) WHERE {_RELATION_SEEN} RETURN n.name, m.name",
)


def visible_counts(conn: kuzu.Connection, viewer: Viewer, legacy: bool) -> VisibleCounts:
    who = {"u": viewer.user_id, "a": viewer.agent_id, "w": viewer.workspace_id}
    groups = [
        (str(k), str(t), str(s), str(st), int(c), float(a or 0.0))
        for k, t, s, st, c, a in execute(conn, FACT_GROUPS, who)
    ]
    names: set[str] = set()
    for query in NAMED:
        params = _only(who, query) | ({"legacy": legacy} if "$legacy" in query else {})
        names.update(str(name) for row in execute(conn, query, params) for name in row)
    return VisibleCounts(
        events=int(execute(conn, EVENTS, _only(who, EVENTS))[0][0]),
        entities=len(names),
        relations=int(execute(conn, RELATIONS, _only(who, RELATIONS) | {"legacy": legacy})[0][0]),
        fact_groups=groups,
        open_conflicts=int(execute(conn, OPEN_CONFLICTS, who)[0][0]),
    )


def _only(params: dict[str, str], query: str) -> dict[str, object]:
    """Kuzu rejects parameters a query does not use."""
    return {k: v for k, v in params.items() if f"${k}" in query}
