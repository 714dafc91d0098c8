"""Owner tags (:mod:`shiyi.memory.scopes`) in PostgreSQL: the keyword index stores each
document's tag; events and facts keep their owner columns, so a vector search limited to some
owners turns the tags back into conditions on those columns."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from psycopg import Connection
from psycopg.rows import TupleRow

from shiyi.memory.models import NodeKind
from shiyi.memory.scopes import NOBODY, fact_owner, owner_tag, parse_owner

_BATCH = 5000
"""Keyword documents told their owner per statement."""


def owner_condition(node: NodeKind, owners: Collection[str]) -> tuple[str, dict[str, Any]]:
    """SQL (with its named parameters) true for the ``node`` rows of these owner tags."""
    parts = [parse_owner(tag) for tag in sorted(set(owners))]
    agents = [p[1:] for p in parts if len(p) == 3 and p[0] == "agent"]
    params: dict[str, Any] = {
        "owner_users": [user for user, _ in agents],
        "owner_agents": [agent for _, agent in agents],
    }
    pairs = (
        "(user_id, agent_id) IN (SELECT * FROM unnest(%(owner_users)s::text[],"
        " %(owner_agents)s::text[]))"
    )
    if node == "event":
        return pairs, params
    if node != "fact":
        return "true", {}
    params["owner_user_ids"] = [p[1] for p in parts if len(p) == 2 and p[0] == "user"]
    params["owner_workspaces"] = [p[1] for p in parts if len(p) == 2 and p[0] == "workspace"]
    params["fact_users"] = sorted({*params["owner_users"], *params["owner_user_ids"]})
    # The CASE decides; the condition before it says the same more loosely, in terms two
    # indexes serve (facts_user, facts_workspace): a viewer's few facts are then counted and
    # compared without reading everyone's (:func:`shiyi.memory.postgres.reads.vector_search`).
    condition = (
        "(user_id = ANY(%(fact_users)s::text[]) OR (scope = 'workspace'"
        " AND workspace_id = ANY(%(owner_workspaces)s::text[])))"
        f" AND CASE scope WHEN 'agent' THEN {pairs}"
        " WHEN 'workspace' THEN workspace_id = ANY(%(owner_workspaces)s::text[])"
        " ELSE user_id = ANY(%(owner_user_ids)s::text[]) END"
    )
    return condition, params


def backfill_keyword_owners(conn: Connection[TupleRow]) -> None:
    """Tell every keyword document its owner tag (a document whose record is gone is
    nobody's); the documents' term statistics do not change, so their trigger is held."""
    owners: dict[str, str] = {}
    rows = conn.execute(
        "SELECT d.id, e.user_id, e.agent_id FROM keyword_docs AS d"
        " JOIN events AS e ON e.id = d.id WHERE d.node = 'event'"
    )
    owners.update((str(i), owner_tag("agent", str(u), str(a))) for i, u, a in rows)
    rows = conn.execute(
        "SELECT d.id, f.scope, f.user_id, f.agent_id, f.workspace_id FROM keyword_docs AS d"
        " JOIN facts AS f ON f.id = d.id WHERE d.node = 'fact'"
    )
    owners.update((str(i), fact_owner(*map(str, rest))) for i, *rest in rows)
    conn.execute("ALTER TABLE keyword_docs DISABLE TRIGGER keyword_docs_updated")
    conn.execute("UPDATE keyword_docs SET owner = %s", (NOBODY,))
    pairs = list(owners.items())
    for start in range(0, len(pairs), _BATCH):
        batch = pairs[start : start + _BATCH]
        conn.execute(
            "UPDATE keyword_docs AS d SET owner = v.owner"
            " FROM unnest(%s::text[], %s::text[]) AS v(id, owner) WHERE d.id = v.id",
            ([key for key, _ in batch], [owner for _, owner in batch]),
        )
    conn.execute("ALTER TABLE keyword_docs ENABLE TRIGGER keyword_docs_updated")
