"""One interface to memory's operations, whoever holds the store.

``shiyi memory``, the REST routes, the MCP tools and the mem0-shaped API all call a
:class:`MemoryOperations`: :class:`shiyi.memory.operations.local.LocalMemory` over a
:class:`~shiyi.memory.service.Memory` opened in this process, or
:class:`shiyi.client.memory_ops.RemoteMemory` over the HTTP client of the ``shiyi serve`` /
``shiyi chat`` that owns the store.  Both answer in the wire models of
:mod:`shiyi.api.schemas`, so a caller cannot tell them apart.

Every operation acts as one identity (the adapter's): another user's memory is not found,
exactly like a missing id.  Errors are :class:`~shiyi.errors.ShiyiError`s: ``NotFound``
for an id or match that is not the caller's, ``Conflict`` for an edit the state refuses
(the same classes whether the adapter is local or remote), ``ScopeDenied`` for a scope the
caller may not write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, TypeAlias

from shiyi.api.import_schemas import ImportIn, ImportOut
from shiyi.api.schemas import (
    EntitySummary,
    EventOut,
    FactDetail,
    FactKind,
    FactOut,
    FactPage,
    ForgetOut,
    ForgetPlanOut,
    JobsRetried,
    MemoryHealthDetail,
    MemoryHitOut,
    MemoryJobs,
    RememberedOut,
    Scope,
)

SearchMode: TypeAlias = Literal["hybrid", "semantic", "graph", "recent", "keyword"]
ForgetBy: TypeAlias = Literal["query", "entity"]


class MemoryOperations(Protocol):
    """What a user may do with their memory (see the module's docstring)."""

    def add(
        self, text: str, *, kind: FactKind = "semantic", key: str = "", scope: Scope = "user"
    ) -> RememberedOut:
        """Remember a fact explicitly (long term, full confidence); a new value for the same
        ``key`` supersedes the old one (without a key, a plain statement of an attribute
        names its own).  The answer says whether the fact is new, confirmed an equal one or
        replaced older values.  ``workspace`` needs a workspace writer."""
        ...

    def search(
        self,
        query: str,
        *,
        mode: SearchMode = "hybrid",
        kinds: Sequence[FactKind] | None = None,
        limit: int = 10,
        since: float | None = None,
        until: float | None = None,
    ) -> list[MemoryHitOut]:
        """The agent's retrieval; ``since``/``until`` (epoch seconds, inclusive) keep hits
        whose time falls in the window."""
        ...

    def read_as(self, query: str) -> dict[str, str]:
        """The typing slips of ``query`` a search reads as words the caller's memories hold
        (``{"resturant": "restaurant"}``); empty when it is searched as typed."""
        ...

    def get(self, memory_id: str) -> EventOut | FactOut:
        """One event or fact (``NotFound`` when missing or not the caller's)."""
        ...

    def list_facts(
        self,
        *,
        kinds: Sequence[FactKind] = (),
        scopes: Sequence[Scope] = (),
        statuses: Sequence[str] = (),
        limit: int = 50,
        offset: int = 0,
    ) -> FactPage:
        """Facts newest change first; no ``statuses``: the current ones (active, pending)."""
        ...

    def update(
        self,
        memory_id: str,
        *,
        key: str | None = None,
        value: str | None = None,
        kind: FactKind | None = None,
        confidence: float | None = None,
    ) -> FactOut:
        """Edit a fact (events are read-only: ``Conflict``); a new text is embedded again."""
        ...

    def delete(self, memory_id: str) -> ForgetOut:
        """Forget one memory and what derives from it (``NotFound`` when not the caller's)."""
        ...

    def forget_ids(self, ids: Sequence[str]) -> ForgetOut:
        """Forget these memories (the caller's of them; the others are skipped)."""
        ...

    def forget(
        self, by: ForgetBy, text: str, *, limit: int = 5, dry_run: bool = False
    ) -> ForgetPlanOut:
        """Forget what a search for ``text`` finds (``by="query"``, its first ``limit``
        hits) or the entity named ``text``; ``dry_run`` only lists it.  ``NotFound`` when
        nothing of the caller's matches."""
        ...

    def history(self, *, key: str = "", entity: str = "") -> list[FactDetail]:
        """Every version of a fact slot, oldest first (superseded ones carry ``valid_to``)."""
        ...

    def import_turns(self, part: ImportIn) -> ImportOut:
        """Queue past turns of one conversation as the caller's (``import`` is a keyword)."""
        ...

    def export(self) -> list[str]:
        """Every event and fact the caller may see, as JSON lines."""
        ...

    def jobs(self) -> MemoryJobs:
        """The background queue; failed jobs' errors for the configured identity only."""
        ...

    def retry_jobs(self) -> JobsRetried:
        """Queue failed jobs again (the configured identity only)."""
        ...

    def run_jobs(self, timeout: float) -> MemoryJobs:
        """Wait (up to ``timeout`` seconds) until every job due now is done."""
        ...

    def health(self) -> MemoryHealthDetail:
        """Counts of what the caller may read; store-wide queue and cache numbers for the
        configured identity only."""
        ...

    def expand(self, anchor: str, window: int = 3) -> list[EventOut]:
        """The remembered turns around an anchor (``run:iteration:segment``)."""
        ...

    def entities(self, *, query: str = "", limit: int = 50) -> list[EntitySummary]:
        """Entities the caller's current facts are about, most facts first; ``query``: a
        part of the name."""
        ...


__all__ = ["ForgetBy", "MemoryOperations", "SearchMode"]
