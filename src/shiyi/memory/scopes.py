"""Who may see and write which memories (seed 001 2.4, shared memory).

* ``user`` facts belong to one user and are seen by every agent working for that user;
* ``agent`` facts belong to one agent of one user (how that agent should work);
* ``workspace`` facts are shared by every user and agent of the workspace; only the agents
  listed in ``memory.lifecycle.workspace_writers`` may write them.

Events (the raw conversation) are private to the user and agent that had the conversation.
Every read path goes through :meth:`Viewer.sees` before a memory leaves the store layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shiyi.errors import ScopeDenied
from shiyi.memory.models import EventRecord, FactRecord, RelationFilter, RelationRecord, Scope


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

    def may_write(self, scope: Scope, writers: Sequence[str]) -> bool:
        return scope != "workspace" or "*" in writers or self.agent_id in writers

    def check_write(self, scope: Scope, writers: Sequence[str]) -> None:
        if not self.may_write(scope, writers):
            raise ScopeDenied(
                f"agent {self.agent_id!r} may not write workspace memory; add it to "
                "memory.lifecycle.workspace_writers or use scope 'user' or 'agent'"
            )

    def owns(self, fact: FactRecord) -> FactRecord:
        """Stamp ``fact`` with this viewer's identity (the writer of the fact)."""
        fact.user_id, fact.agent_id, fact.workspace_id = (
            self.user_id,
            self.agent_id,
            self.workspace_id,
        )
        return fact
