""":class:`~shiyi.memory.operations.MemoryOperations` over a :class:`Memory` in this process.

Blocking (store calls): an async caller runs these in a worker thread.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence

from shiyi.api.import_schemas import ImportIn, ImportOut
from shiyi.api.schemas import (
    EntitySummary,
    EventOut,
    FactDetail,
    FactKind,
    FactOut,
    FactPage,
    FailedJobOut,
    ForgetOut,
    ForgetPlanOut,
    JobBacklogOut,
    JobCount,
    JobsRetried,
    MemoryHealthDetail,
    MemoryHitOut,
    MemoryJobs,
    RememberedOut,
    Scope,
    too_long,
)
from shiyi.errors import Conflict, NotFound, NothingToForget, ShiyiError
from shiyi.memory.lifecycle.explicit import Statement
from shiyi.memory.lifecycle.forget_report import ForgetReport
from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.operations import views
from shiyi.memory.operations.edits import patch_fact, writable_forget_plan
from shiyi.memory.operations.fact_views import shown, strip_key_prefix
from shiyi.memory.operations.interface import ForgetBy, SearchMode
from shiyi.memory.operations.wire import (
    event_out,
    fact_detail,
    fact_out,
    forget_out,
    health_detail,
    hit_out,
    remembered_out,
)
from shiyi.memory.service import Memory
from shiyi.memory.text.entities import normalize_name
from shiyi.memory.text.subjects import subject_of
from shiyi.memory.transfer.export import export_lines

WINDOW_OVERFETCH = 5
"""A search with a time window asks for this many times ``limit`` and keeps what falls in it."""


class LocalMemory:
    """Memory's operations as ``memory``'s viewer (open a scoped view for another user).

    ``configured``: the identity the store belongs to (sees failed jobs' errors, may retry
    them; default: ``memory`` is not a view).  ``settle``: no worker runs in this process
    (``shiyi memory`` opens the store for one command), so a write waits here for its
    embedding and linking, and is searchable when the call returns.  ``on_forget`` hears
    the sessions a forget touched (the server drops their idle agents' cached turns).
    ``compact``: rewrite the graph file after a forget, so no bytes of it remain (only
    while no one else reads the store: ``shiyi memory forget``).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        configured: bool | None = None,
        settle: bool = False,
        compact: bool = False,
        on_forget: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.memory = memory
        self.configured = memory.own_queue if configured is None else configured
        self.settle = settle
        self.compact = compact
        self.on_forget = on_forget

    # --- writing -----------------------------------------------------------------------

    def add(
        self, text: str, *, kind: FactKind = "semantic", key: str = "", scope: Scope = "user"
    ) -> RememberedOut:
        if not text.strip():
            raise ShiyiError("the text to remember is empty: give what to remember")
        if why := too_long(text):  # as over HTTP: a served CLI had refused what a local one took
            raise ShiyiError(why)
        value = strip_key_prefix(key, text)
        if not value:
            raise ShiyiError(f"the text {text!r} holds only the key {key!r}: give the value")
        remembered = self.memory.remember_outcome(Statement(value, kind, key, scope=scope))
        self._settle()
        return remembered_out(remembered)

    def update(
        self,
        memory_id: str,
        *,
        key: str | None = None,
        value: str | None = None,
        kind: FactKind | None = None,
        confidence: float | None = None,
    ) -> FactOut:
        fact = patch_fact(
            self.memory, memory_id, key=key, value=value, kind=kind, confidence=confidence
        )
        self._settle()
        return fact_out(fact)

    def import_turns(self, part: ImportIn) -> ImportOut:
        events = [
            EventRecord(
                t.id,
                part.session_id,
                f"{part.session_id}:{t.run}",
                t.ts,
                t.role,
                t.content,
                "imported",
                iteration=t.iteration,
            )
            for t in part.turns
        ]
        claimed = self.memory.import_conversation(part.session_id, events)
        self._settle()
        renamed = claimed.original if claimed.renamed else ""
        return ImportOut(session_id=claimed.session_id, renamed_from=renamed, queued=len(events))

    def _settle(self) -> None:
        if self.settle:
            self.memory.worker.drain(timeout=60)

    # --- forgetting --------------------------------------------------------------------

    def delete(self, memory_id: str) -> ForgetOut:
        found = self.memory.get(memory_id)
        if found is None:
            raise NotFound(f"no memory {memory_id!r}")
        if isinstance(found, FactRecord):
            self.memory.viewer.check_write(found.scope, self.memory.writers)
        report = self._forgotten(self.memory.forget_ids([memory_id]))
        if report.total == 0:
            raise NotFound(f"no memory {memory_id!r}")
        return forget_out(report).model_copy(update={"forgotten_ids": [memory_id]})

    def forget_ids(self, ids: Sequence[str]) -> ForgetOut:
        found = [i for i in dict.fromkeys(ids) if self.memory.get(i) is not None]
        done = forget_out(self._forgotten(self.memory.forget_ids(found))) if found else None
        return (done or ForgetOut(deleted=0, counts={}, bytes_remain=[], note="")).model_copy(
            update={"forgotten_ids": found}
        )

    def forget(
        self, by: ForgetBy, text: str, *, limit: int = 5, dry_run: bool = False
    ) -> ForgetPlanOut:
        nothing = NotFound(f"nothing of yours matches {by} {text!r}")
        try:
            plan = writable_forget_plan(self.memory, by, text, limit)
        except NothingToForget as exc:
            if by == "query" and self.configured:  # the store's own identity: say why
                raise NotFound(str(exc)) from None
            # One answer whether or not the name is stored at all: "no entity named X" for
            # a missing name but not for another user's would tell which names they use.
            raise nothing from None
        if not plan.event_ids and not plan.fact_ids:
            raise nothing
        listed = ForgetPlanOut(
            target=plan.target,
            hits=[hit_out(hit) for hit in plan.hits],
            events=len(plan.event_ids),
            facts=len(plan.fact_ids),
        )
        if dry_run:
            return listed
        report = self._forgotten(self.memory.forgetter().execute(plan))
        return listed.model_copy(update={"forgotten": forget_out(report)})

    def _forgotten(self, report: ForgetReport) -> ForgetReport:
        if self.compact and report.total:
            self.memory.compact()
            report.compacted = True
        if self.on_forget is not None and report.sessions:
            self.on_forget(report.sessions)
        return report

    # --- reading -----------------------------------------------------------------------

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
        windowed = since is not None or until is not None
        asked = limit * WINDOW_OVERFETCH if windowed else limit
        hits = self.memory.search(query, mode=mode, kinds=kinds, limit=asked)
        if windowed:
            hits = [h for h in hits if _within(h.ts, since, until)]
        return [hit_out(hit) for hit in hits[:limit]]

    def read_as(self, query: str) -> dict[str, str]:
        return self.memory.read_as(query)

    def get(self, memory_id: str) -> EventOut | FactOut:
        found = self.memory.get(memory_id)
        if isinstance(found, EventRecord):
            return event_out(found)
        if isinstance(found, FactRecord):
            return fact_out(found)
        raise NotFound(f"no memory {memory_id!r}; a search shows ids")

    def list_facts(
        self,
        *,
        kinds: Sequence[FactKind] = (),
        scopes: Sequence[Scope] = (),
        statuses: Sequence[str] = (),
        limit: int = 50,
        offset: int = 0,
    ) -> FactPage:
        wanted = views.FactFilter(kinds=kinds, scopes=scopes, statuses=statuses)
        found = views.list_facts(self.memory, wanted, limit, offset)
        return FactPage(
            facts=shown(self.memory, found.facts),
            total=found.total,
            limit=limit,
            offset=offset,
            complete=found.complete,
        )

    def history(self, *, key: str = "", entity: str = "") -> list[FactDetail]:
        # Nothing asked, or a name no memory of the caller's knows: no versions.  Not an
        # error naming the entity, which would tell one user which names another's hold.
        if not key and not entity:
            return []
        try:
            facts = self.memory.history(key=key, entity=entity)
        except ShiyiError:
            if entity:
                return []
            raise
        users = self.memory.lifecycle.facts.user_names(self.memory.viewer)
        subjects = {f.id: subject_of(f.entities, f.value, users) for f in facts}
        named = {n for subject in subjects.values() for n in subject}
        # as the person was written ("Ana"), not the entity's key ("ana")
        shown = {e.name: e.display or e.name for e in self.memory.store.find_entities(list(named))}
        return [
            fact_detail(fact).model_copy(
                update={"subject": [shown.get(n, n) for n in subjects[fact.id]]}
            )
            for fact in facts
        ]

    def expand(self, anchor: str, window: int = 3) -> list[EventOut]:
        return [event_out(event) for event in self.memory.expand(anchor, window)]

    def export(self) -> list[str]:
        return list(export_lines(self.memory.store, self.memory.viewer))

    def entities(self, *, query: str = "", limit: int = 50) -> list[EntitySummary]:
        found = views.list_facts(self.memory, views.FactFilter(), views.SCAN_LIMIT, 0)
        counts = Counter(name for fact in found.facts for name in set(fact.entities))
        wanted = normalize_name(query) if query else ""
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return [EntitySummary(name=name, facts=n) for name, n in ranked if wanted in name][:limit]

    # --- the queue and health ----------------------------------------------------------

    def jobs(self) -> MemoryJobs:
        queue, worker = self.memory.jobs, self.memory.worker
        failed = queue.failed() if self.configured else []
        waiting = [JobBacklogOut.model_validate(b, from_attributes=True) for b in queue.backlog()]
        if not self.configured:  # a deferral reason can quote another user's text
            waiting = [w.model_copy(update={"reason": ""}) for w in waiting]
        runnable = worker.ready_kinds()
        return MemoryJobs(
            summary=[
                JobCount(kind=r.kind, status=r.status, count=r.count) for r in queue.summary()
            ],
            failed=[FailedJobOut.model_validate(f, from_attributes=True) for f in failed],
            # Due now or running, of the kinds the worker can run: what run_jobs waits for
            # (an extraction job without a fast model is not due).
            ready=queue.ready_count(runnable),
            waiting=waiting,
            runnable=runnable,
            worker_running=worker.running,
        )

    def retry_jobs(self) -> JobsRetried:
        if not self.configured:
            raise Conflict("only the server's own identity (server.token) may retry failed jobs")
        requeued = self.memory.jobs.retry_failed()
        self.memory.worker.wake()
        return JobsRetried(requeued=requeued)

    def run_jobs(self, timeout: float) -> MemoryJobs:
        worker = self.memory.worker
        if worker.running:  # the worker does them: wait for it
            deadline = time.monotonic() + timeout
            while self.jobs().ready and time.monotonic() < deadline:
                time.sleep(0.2)
        else:
            worker.drain(timeout=timeout)
        return self.jobs()

    def health(self) -> MemoryHealthDetail:
        return health_detail(self.memory.visible_health())


def _within(ts: float, since: float | None, until: float | None) -> bool:
    return (since is None or ts >= since) and (until is None or ts <= until)
