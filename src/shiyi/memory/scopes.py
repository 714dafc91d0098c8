"""Who may see and write which memories (seed 001 2.4, shared memory).

* ``user`` facts belong to one user and are seen by every agent working for that user;
* ``agent`` facts belong to one agent of one user (how that agent should work);
* ``workspace`` facts are shared by every user and agent of the workspace; only the writers
  listed in ``memory.lifecycle.workspace_writers`` may write them (:class:`Writers`): an
  agent id names an agent of the configured user, ``user:<id>`` every agent of another user,
  ``*`` anyone.  Another user of a server is no writer unless named: every user's agent is
  called ``shiyi`` by default, so the default writer list (``[shiyi]``) had let any user of
  a server plant or rewrite what every other user's agent reads.

Events (the raw conversation) are private to the user and agent that had the conversation.
Every read path goes through :meth:`Viewer.sees` before a memory leaves the store layer.

The recall paths also ask the store for the viewer's own memories only (:meth:`Viewer.owners`):
every event and fact carries one *owner tag* (:func:`owner_of`) saying who may see it, and a
viewer sees exactly the tags it holds, so a search filters by tag inside its own query and one
user's thousands of memories on the same words cannot crowd another's out of its candidates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from shiyi.errors import ScopeDenied
from shiyi.memory.models import EventRecord, FactRecord, RelationFilter, RelationRecord, Scope


@dataclass(slots=True, frozen=True)
class Writers:
    """``memory.lifecycle.workspace_writers``, read for the configured user ``operator``."""

    names: tuple[str, ...]
    operator: str
    """``memory.user_id``: the user whose agents the bare agent ids name."""

    @classmethod
    def of(cls, names: Sequence[str], operator: str) -> Writers:
        return cls(tuple(names), operator)

    def allow(self, viewer: Viewer) -> bool:
        if "*" in self.names or f"user:{viewer.user_id}" in self.names:
            return True
        return viewer.user_id == self.operator and viewer.agent_id in self.names

    def who(self, viewer: Viewer) -> str:
        if viewer.user_id == self.operator:
            return f"agent {viewer.agent_id!r}"
        return f"user {viewer.user_id!r}"

    def entry_for(self, viewer: Viewer) -> str:
        """What to add so ``viewer`` may write."""
        return viewer.agent_id if viewer.user_id == self.operator else f"user:{viewer.user_id}"


@dataclass(slots=True, frozen=True)
class Viewer:
    user_id: str = "default"
    agent_id: str = "shiyi"
    workspace_id: str = "default"

    def sees(self, record: EventRecord | FactRecord) -> bool:
        if isinstance(record, EventRecord):
            return record.user_id == self.user_id and record.agent_id == self.agent_id
        return self.sees_fact(record)

    def sees_fact(self, fact: FactRecord) -> bool:
        if fact.scope == "workspace":
            return fact.workspace_id == self.workspace_id
        if fact.scope == "agent":
            return fact.user_id == self.user_id and fact.agent_id == self.agent_id
        return fact.user_id == self.user_id

    def owners(self) -> frozenset[str]:
        """The owner tags of every event and fact this viewer sees (:func:`owner_of`)."""
        return frozenset(
            {
                owner_tag("agent", self.user_id, self.agent_id),
                owner_tag("user", self.user_id),
                owner_tag("workspace", self.workspace_id),
            }
        )

    def sees_relation(self, relation: RelationRecord, *, legacy: bool = False) -> bool:
        """A relation is private like the turns it was extracted from; ``legacy``: also the
        ones stored before relations had owners (for the configured identity)."""
        if not relation.user_id:
            return legacy
        return relation.user_id == self.user_id and relation.agent_id == self.agent_id

    def relations(self, configured: Viewer) -> RelationFilter:
        """The relations this viewer may see and walk; the owner-less (older) ones only when
        it is the store's ``configured`` identity."""
        legacy = (self.user_id, self.agent_id) == (configured.user_id, configured.agent_id)
        return lambda relation: self.sees_relation(relation, legacy=legacy)

    def may_write(self, scope: Scope, writers: Writers) -> bool:
        return scope != "workspace" or writers.allow(self)

    def check_write(self, scope: Scope, writers: Writers) -> None:
        if not self.may_write(scope, writers):
            raise ScopeDenied(
                f"{writers.who(self)} may not write workspace memory; add "
                f"{writers.entry_for(self)!r} to memory.lifecycle.workspace_writers or use "
                "scope 'user' or 'agent'"
            )

    def owns(self, fact: FactRecord) -> FactRecord:
        """Stamp ``fact`` with this viewer's identity (the writer of the fact)."""
        fact.user_id, fact.agent_id, fact.workspace_id = (
            self.user_id,
            self.agent_id,
            self.workspace_id,
        )
        return fact


NOBODY = "[]"
"""The owner tag of a record that is gone: no viewer holds it."""


def owner_tag(scope: Scope, *names: str) -> str:
    """Who may see a memory, as one string: JSON, so no id can make two owners' tags equal."""
    return json.dumps([scope, *names], ensure_ascii=False)


def owner_of(record: EventRecord | FactRecord) -> str:
    """The owner tag of ``record``: :meth:`Viewer.sees` it exactly when the viewer's
    :meth:`~Viewer.owners` hold it (a turn is its user's and agent's, as an agent fact is)."""
    if isinstance(record, EventRecord):
        return owner_tag("agent", record.user_id, record.agent_id)
    return fact_owner(record.scope, record.user_id, record.agent_id, record.workspace_id)


def fact_owner(scope: str, user_id: str, agent_id: str, workspace_id: str) -> str:
    """:func:`owner_of` a fact from its columns (a fact of an unknown scope is its user's)."""
    if scope == "workspace":
        return owner_tag("workspace", workspace_id)
    if scope == "agent":
        return owner_tag("agent", user_id, agent_id)
    return owner_tag("user", user_id)


def parse_owner(tag: str) -> list[str]:
    """``[scope, *names]`` of an owner tag; ``[]`` for one that is not (:data:`NOBODY`)."""
    try:
        parsed = json.loads(tag)
    except ValueError:
        return []
    if not isinstance(parsed, list) or not all(isinstance(part, str) for part in parsed):
        return []
    return [str(part) for part in parsed]
