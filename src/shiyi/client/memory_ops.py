"""Memory's operations (:class:`shiyi.memory.operations.MemoryOperations`, structurally:
the client imports no storage module) through the API of the process owning the store.

The server answers as the token's user, so this adapter acts as that user.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

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
from shiyi.client.sync import Client
from shiyi.errors import Conflict, NotFound

SearchMode = Literal["hybrid", "semantic", "graph", "recent", "keyword"]
POLL = 0.2


class RemoteMemory:
    """The operations over ``client`` (closing it stays the caller's)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def add(
        self, text: str, *, kind: FactKind = "semantic", key: str = "", scope: Scope = "user"
    ) -> RememberedOut:
        return self.client.memory_add(text, kind=kind, key=key, scope=scope)

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
        return self.client.memory_search(
            query,
            mode=mode,
            limit=limit,
            kinds=list(kinds) if kinds else None,
            since=since,
            until=until,
        )

    def read_as(self, query: str) -> dict[str, str]:
        return self.client.memory_read_as(query)

    def get(self, memory_id: str) -> EventOut | FactOut:
        return self.client.memory_get(memory_id)

    def list_facts(
        self,
        *,
        kinds: Sequence[FactKind] = (),
        scopes: Sequence[Scope] = (),
        statuses: Sequence[str] = (),
        limit: int = 50,
        offset: int = 0,
    ) -> FactPage:
        return self.client.memory_list(
            kinds=list(kinds),
            scopes=list(scopes),
            statuses=list(statuses),
            limit=limit,
            offset=offset,
        )

    def update(
        self,
        memory_id: str,
        *,
        key: str | None = None,
        value: str | None = None,
        kind: FactKind | None = None,
        confidence: float | None = None,
    ) -> FactOut:
        given = {"key": key, "value": value, "kind": kind, "confidence": confidence}
        changes: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        return self.client.memory_update(memory_id, **changes)

    def delete(self, memory_id: str) -> ForgetOut:
        return self.client.memory_delete(memory_id)

    def forget_ids(self, ids: Sequence[str]) -> ForgetOut:
        """One delete per id (another user's or a missing one is skipped), summed."""
        deleted, counts, remain, notes = 0, dict[str, int](), dict[str, None](), dict[str, None]()
        forgotten = []
        for memory_id in dict.fromkeys(ids):
            try:
                done = self.client.memory_delete(memory_id)
            except NotFound:
                continue
            deleted += done.deleted
            forgotten.append(memory_id)
            for name, n in done.counts.items():
                counts[name] = counts.get(name, 0) + n
            remain |= dict.fromkeys(done.bytes_remain)
            if done.note:
                notes[done.note] = None
        return ForgetOut(
            deleted=deleted,
            counts=counts,
            bytes_remain=list(remain),
            note=" ".join(notes),
            forgotten_ids=forgotten,
        )

    def forget(
        self,
        by: Literal["query", "entity"],
        text: str,
        *,
        limit: int = 5,
        dry_run: bool = False,
    ) -> ForgetPlanOut:
        return self.client.memory_forget(by, text, limit=limit, dry_run=dry_run)

    def history(self, *, key: str = "", entity: str = "") -> list[FactDetail]:
        return self.client.memory_history(key=key, entity=entity)

    def import_turns(self, part: ImportIn) -> ImportOut:
        return self.client.memory_import(part)

    def export(self) -> list[str]:
        return self.client.memory_export()

    def jobs(self) -> MemoryJobs:
        return self.client.memory_jobs()

    def retry_jobs(self) -> JobsRetried:
        return self.client.memory_retry_jobs()

    def run_jobs(self, timeout: float) -> MemoryJobs:
        """The server's worker does the jobs anyway: wait until none is due."""
        queue = self.client.memory_jobs()
        deadline = time.monotonic() + timeout
        while queue.ready and time.monotonic() < deadline:
            time.sleep(POLL)
            queue = self.client.memory_jobs()
        return queue

    def health(self) -> MemoryHealthDetail:
        detail = self.client.memory_health().detail
        if detail is None:
            raise Conflict("memory is disabled on the server (memory.enabled is false)")
        return detail

    def expand(self, anchor: str, window: int = 3) -> list[EventOut]:
        return self.client.memory_expand(anchor, window)

    def entities(self, *, query: str = "", limit: int = 50) -> list[EntitySummary]:
        return self.client.memory_entities(query, limit)
