"""The graph recall path on PostgreSQL: up to two hops from the query's entities.

Hop 1: events MENTIONING and facts ABOUT a seed entity.  Hop 2: the same for entities one
RELATED_TO edge away from a seed.  Each event or fact scores the sum over the entities it
touches (seed 1.0, neighbour 0.5, times the entity's specificity), ties broken by recency
then id; entities mentioned by more than ``HUB_MENTIONS`` events add no events (like a stop
word), but keep their facts, and only the rarest entities are expanded, up to a budget of
mentions (:func:`~shiyi.memory.text.topics.within_budget`).  This is
the embedded store's rule (:func:`shiyi.memory.kuzu.graph.neighbourhood`), here as joins
scored and ranked inside PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shiyi.memory.models import Neighbourhood, RelationFilter, Scored
from shiyi.memory.postgres.rows import relation_from_row
from shiyi.memory.postgres.schema import Conn
from shiyi.memory.text.topics import specificity, within_budget

DIRECT_SCORE = 1.0
INDIRECT_SCORE = 0.5
HUB_MENTIONS = 1000
"""Same cap as the embedded store's ``shiyi.memory.kuzu.graph.HUB_MENTIONS``."""

_RELATIONS_OF = (
    "SELECT src, dst, type, weight, valid_from, valid_to, user_id, agent_id FROM relations"
    " WHERE src = ANY(%(names)s) OR dst = ANY(%(names)s) ORDER BY seq"
)
# The degree is counted only up to the cap + 1 (an index range scan), not over a hub's
# every mention.
_DEGREE = """
SELECT w.name, (SELECT count(*) FROM (SELECT 1 FROM mentions AS m WHERE m.entity = w.name
                                       LIMIT %(hub)s + 1) AS capped)
FROM unnest(%(names)s::text[]) AS w(name)
"""
# One owner's: counted among their turns (one range of the mentions_owner index).
_OWNED_DEGREE = """
SELECT w.name, (SELECT count(*) FROM (SELECT 1 FROM mentions AS m WHERE m.entity = w.name
                                       AND m.user_id = %(user)s AND m.agent_id = %(agent)s
                                       LIMIT %(hub)s + 1) AS capped)
FROM unnest(%(names)s::text[]) AS w(name)
"""
_EVENTS = """
SELECT e.id, sum(w.weight) AS score
FROM unnest(%(names)s::text[], %(weights)s::float8[]) AS w(name, weight)
JOIN mentions AS m ON m.entity = w.name {owned} JOIN events AS e ON e.id = m.event_id
GROUP BY e.id, e.ts ORDER BY score DESC, e.ts DESC, e.id LIMIT %(n)s
"""
_OWNED = "AND m.user_id = %(user)s AND m.agent_id = %(agent)s"
# The facts an owner may see, as :meth:`~shiyi.memory.scopes.Viewer.sees_fact` admits them
# (workspace facts all pass: whose workspace is checked after, as it is for every path).
_OWNED_FACTS = (
    "AND (f.scope = 'workspace' OR (f.user_id = %(user)s"
    " AND (f.scope <> 'agent' OR f.agent_id = %(agent)s)))"
)
_FACTS = """
SELECT f.id, sum(w.weight) AS score
FROM unnest(%(names)s::text[], %(weights)s::float8[]) AS w(name, weight)
JOIN about AS a ON a.entity = w.name JOIN facts AS f ON f.id = a.fact_id {owned}
GROUP BY f.id, f.updated_at, f.created_at
ORDER BY score DESC, coalesce(f.updated_at, f.created_at, 0) DESC, f.id LIMIT %(n)s
"""


def neighbourhood(
    conn: Conn,
    seeds: list[str],
    hops: int,
    limit: int,
    follows: RelationFilter | None = None,
    owner: tuple[str, str] | None = None,
) -> Neighbourhood:
    """Events and facts around ``seeds`` (normalised entity names that exist); ``owner``:
    only that (user_id, agent_id)'s turns and the facts it may see, mentions counted among
    its turns."""
    if not seeds or hops < 1 or limit <= 0:
        return Neighbourhood(list(seeds), [], [], [])
    rows = conn.execute(_RELATIONS_OF, {"names": seeds}).fetchall()
    relations = [relation_from_row(r) for r in rows]
    relations = [r for r in relations if follows is None or follows(r)]
    weights = dict.fromkeys(seeds, DIRECT_SCORE)
    if hops >= 2:
        for rel in relations:
            for name in (rel.src, rel.dst):
                weights.setdefault(name, INDIRECT_SCORE)
    user, agent = owner or ("", "")
    whose = {"user": user, "agent": agent}
    counting = _DEGREE if owner is None else _OWNED_DEGREE
    params = {"names": list(weights), "hub": HUB_MENTIONS, **whose}
    rows = conn.execute(counting, params).fetchall()
    degree = {str(name): int(count) for name, count in rows}
    weights = {name: weight * specificity(degree.get(name, 0)) for name, weight in weights.items()}
    rarest = within_budget({name: degree.get(name, 0) for name in weights}, HUB_MENTIONS)
    expand = {name: weights[name] for name in rarest}
    around = _EVENTS.format(owned=_OWNED if owner is not None else "")
    events = (
        _scored(conn.execute(around, _weighted(expand, limit) | whose).fetchall()) if expand else []
    )
    about = _FACTS.format(owned=_OWNED_FACTS if owner is not None else "")
    facts = _scored(conn.execute(about, _weighted(weights, limit) | whose).fetchall())
    return Neighbourhood(list(weights), events, facts, relations)


def _weighted(weights: dict[str, float], limit: int) -> dict[str, Any]:
    return {"names": list(weights), "weights": list(weights.values()), "n": limit}


def _scored(rows: Sequence[Sequence[Any]]) -> list[Scored]:
    return [Scored(str(node_id), float(score)) for node_id, score in rows]
