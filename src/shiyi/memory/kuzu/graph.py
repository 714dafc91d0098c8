"""The graph recall path on Kuzu: up to two hops from the query's entities.

Hop 1: events MENTIONING and facts ABOUT a seed entity.  Hop 2: the same for entities one
RELATED_TO edge away from a seed.  PostgreSQL runs the same rule as joins
(:mod:`shiyi.memory.postgres.graph`); the Cypher text and row conversions the rest of the
store shares are in :mod:`shiyi.memory.kuzu.queries`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import kuzu

from shiyi.memory.kuzu.queries import prepared
from shiyi.memory.models import Neighbourhood, RelationFilter, RelationRecord, Scored
from shiyi.memory.text.topics import specificity, within_budget

Owner = tuple[str, str]
"""(user_id, agent_id): whose turns."""

_RELATIONS_OF = (
    "MATCH (a:Entity)-[r:RELATED_TO]->(b:Entity) WHERE a.name IN $names OR b.name IN $names"
    " RETURN a.name, b.name, r.type, r.weight, r.valid_from, r.valid_to, r.user_id, r.agent_id"
)
# Entity first: Kuzu otherwise scans every event's mentions for the names (at 100k turns of
# real conversation, counting four entities' mentions took 60 ms that way, 3.4 ms this way).
_MENTIONING = (
    "MATCH (n:Entity) WHERE n.name IN $names MATCH (n)<-[:MENTIONS]-(e:Event)"
    " RETURN e.id, n.name, e.ts"
)
_ABOUT = (
    "MATCH (f:Fact)-[:ABOUT]->(n:Entity) WHERE n.name IN $names{owned}"
    " RETURN f.id, n.name, coalesce(f.updated_at, f.created_at)"
)
# The facts an owner may see, as :meth:`~shiyi.memory.scopes.Viewer.sees_fact` admits them
# (workspace facts all pass: whose workspace is checked after, as it is for every path).
_OWNED_FACTS = (
    " AND (f.scope = 'workspace' OR (f.user_id = $user"
    " AND (f.scope <> 'agent' OR f.agent_id = $agent)))"
)
_DEGREE = (
    "MATCH (n:Entity) WHERE n.name IN $names MATCH (n)<-[:MENTIONS]-(e:Event)"
    " RETURN n.name, count(e)"
)
_OWNED = " WHERE e.user_id = $user AND e.agent_id = $agent"
DIRECT_SCORE = 1.0
"""Score an event/fact gets per query entity it touches directly."""
INDIRECT_SCORE = 0.5
"""Score per entity one RELATED_TO hop away from a query entity (hops=2)."""
HUB_MENTIONS = 1000
"""An entity mentioned by more events than this is a hub: its events are not expanded.
Measured at 100k events: expanding an entity with 20k mentions took 60-340 ms (Kuzu reads
every mentioning event), 2k mentions 20-50 ms; counting mentions takes ~1 ms.  Like a stop
word, touching a hub says little about relevance; its facts and relations still count."""


class MentionIndex(Protocol):
    """Where the graph path reads MENTIONS edges: Kuzu itself, or the SQLite mirror
    (:class:`~shiyi.memory.kuzu.mention_rows.MentionRows`, several times faster at scale)."""

    def degree(
        self, names: Sequence[str], owner: Owner | None = None, hub: int = 0
    ) -> dict[str, int]:
        """Mentions of each name; ``owner``: by that (user_id, agent_id)'s turns, and past
        ``hub`` of those, everyone's."""
        ...

    def mentioning(
        self, names: Sequence[str], owner: Owner | None = None
    ) -> list[tuple[str, str, float]]: ...


class KuzuMentions:
    """MENTIONS edges read from the graph."""

    def __init__(self, conn: kuzu.Connection) -> None:
        self.conn = conn

    def degree(
        self, names: Sequence[str], owner: Owner | None = None, hub: int = 0
    ) -> dict[str, int]:
        total = self._degree(_DEGREE, {"names": list(names)})
        if owner is None:
            return total
        query = _DEGREE.replace(" RETURN", _OWNED + " RETURN")
        mine = self._degree(query, {"names": list(names), "user": owner[0], "agent": owner[1]})
        return {name: total[name] if count > hub else count for name, count in mine.items()}

    def _degree(self, query: str, params: dict[str, Any]) -> dict[str, int]:
        return {str(name): int(count) for name, count in prepared(self.conn, query, params)}

    def mentioning(
        self, names: Sequence[str], owner: Owner | None = None
    ) -> list[tuple[str, str, float]]:
        params: dict[str, Any] = {"names": list(names)}
        query = _MENTIONING
        if owner is not None:
            query = _MENTIONING.replace(" RETURN", _OWNED + " RETURN")
            params |= {"user": owner[0], "agent": owner[1]}
        rows = prepared(self.conn, query, params)
        return [(str(e), str(n), float(ts or 0.0)) for e, n, ts in rows]


def neighbourhood(
    conn: kuzu.Connection,
    seeds: list[str],
    hops: int,
    limit: int,
    mentions: MentionIndex | None = None,
    follows: RelationFilter | None = None,
    owner: Owner | None = None,
) -> Neighbourhood:
    """Events and facts around ``seeds``: hop 1 = touching a seed, hop 2 = touching an entity
    RELATED_TO a seed.  Each node scores the sum over the entities it touches (direct 1.0,
    indirect 0.5, each times the entity's :func:`specificity`: a topic every other turn
    mentions says little), ties broken by recency; ``relations`` are the edges incident to
    the seeds.  Only the rarest entities are expanded, up to a budget of mentions read
    (:func:`~shiyi.memory.text.topics.within_budget`).
    Events are not expanded from hubs (see ``HUB_MENTIONS``).  ``mentions``: where MENTIONS
    edges are read (default: the graph); ``owner``: only that (user_id, agent_id)'s turns
    and the facts it may see are reached, and an entity's mentions are counted among its
    turns (what another user says of it, however often, makes it no hub)."""
    if not seeds or hops < 1 or limit <= 0:
        return Neighbourhood(list(seeds), [], [], [])
    edges = mentions or KuzuMentions(conn)
    relations = [_relation(r) for r in prepared(conn, _RELATIONS_OF, {"names": seeds})]
    relations = [r for r in relations if follows is None or follows(r)]
    weights = dict.fromkeys(seeds, DIRECT_SCORE)
    if hops >= 2:
        for rel in relations:
            for name in (rel.src, rel.dst):
                weights.setdefault(name, INDIRECT_SCORE)
    degree = edges.degree(list(weights), owner, HUB_MENTIONS)
    weights = {name: weight * specificity(degree.get(name, 0)) for name, weight in weights.items()}
    expand = within_budget({name: degree.get(name, 0) for name in weights}, HUB_MENTIONS)
    events = _ranked(edges.mentioning(expand, owner) if expand else [], weights, limit)
    about = _ABOUT.format(owned=_OWNED_FACTS if owner is not None else "")
    whose = {"user": owner[0], "agent": owner[1]} if owner is not None else {}
    facts = _ranked(prepared(conn, about, {"names": list(weights), **whose}), weights, limit)
    return Neighbourhood(list(weights), events, facts, relations)


def _relation(row: Sequence[Any]) -> RelationRecord:
    return RelationRecord(
        src=str(row[0]),
        dst=str(row[1]),
        type=str(row[2]),
        weight=float(row[3] if row[3] is not None else 1.0),
        valid_from=row[4],
        valid_to=row[5],
        user_id=str(row[6] or "") if len(row) > 6 else "",
        agent_id=str(row[7] or "") if len(row) > 7 else "",
    )


def _ranked(rows: Iterable[Sequence[Any]], weights: dict[str, float], limit: int) -> list[Scored]:
    score: dict[str, float] = {}
    when: dict[str, float] = {}
    for node_id, entity, ts in rows:
        score[node_id] = score.get(node_id, 0.0) + weights.get(entity, 0.0)
        when[node_id] = float(ts or 0.0)
    ranked = sorted(score, key=lambda i: (-score[i], -when[i], i))[:limit]
    return [Scored(i, score[i]) for i in ranked]
