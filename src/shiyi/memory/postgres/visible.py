"""Counts of what one viewer may read (the server's ``/v1/memory/health``; issue 29: store-wide
counts let one user watch another's activity).  The rules are :class:`Viewer`'s, as in
:mod:`shiyi.memory.kuzu.visible`."""

from __future__ import annotations

from shiyi.memory.models import VisibleCounts
from shiyi.memory.postgres.schema import Conn
from shiyi.memory.scopes import Viewer

_FACT_SEEN = (
    "((f.scope = 'workspace' AND f.workspace_id = %(w)s)"
    " OR (f.scope = 'agent' AND f.user_id = %(u)s AND f.agent_id = %(a)s)"
    " OR (f.scope NOT IN ('workspace', 'agent') AND f.user_id = %(u)s))"
)
_EVENT_SEEN = "e.user_id = %(u)s AND e.agent_id = %(a)s"
_RELATION_SEEN = "((r.user_id = %(u)s AND r.agent_id = %(a)s) OR (%(legacy)s AND r.user_id = ''))"
_FACT_GROUPS = (
    f"SELECT kind, tier, scope, status, count(*), avg(confidence) FROM facts AS f"
    f" WHERE {_FACT_SEEN} GROUP BY kind, tier, scope, status ORDER BY kind, tier, scope, status"
)
_COUNTS = f"""
SELECT
  (SELECT count(*) FROM events AS e WHERE {_EVENT_SEEN}),
  (SELECT count(*) FROM relations AS r WHERE {_RELATION_SEEN}),
  (SELECT count(*) FROM facts AS f
   WHERE {_FACT_SEEN} AND f.status = 'pending' AND f.conflicts_with <> ''),
  (SELECT count(*) FROM (
     SELECT m.entity FROM mentions AS m JOIN events AS e ON e.id = m.event_id
     WHERE {_EVENT_SEEN}
     UNION SELECT a.entity FROM about AS a JOIN facts AS f ON f.id = a.fact_id WHERE {_FACT_SEEN}
     UNION SELECT r.src FROM relations AS r WHERE {_RELATION_SEEN}
     UNION SELECT r.dst FROM relations AS r WHERE {_RELATION_SEEN}) AS named)
"""


def visible_counts(conn: Conn, viewer: Viewer, legacy: bool) -> VisibleCounts:
    who = {"u": viewer.user_id, "a": viewer.agent_id, "w": viewer.workspace_id, "legacy": legacy}
    groups = [
        (str(k), str(t), str(s), str(st), int(c), float(a or 0.0))
        for k, t, s, st, c, a in conn.execute(_FACT_GROUPS, who).fetchall()
    ]
    row = conn.execute(_COUNTS, who).fetchone()
    assert row is not None
    events, relations, conflicts, entities = (int(value) for value in row)
    return VisibleCounts(events, entities, relations, groups, conflicts)
