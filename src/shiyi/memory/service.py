"""The memory facade the agent, tools and CLI use: one object per owning process."""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence

from shiyi.config.private_dir import ensure_private_dir
from shiyi.config.settings import MemorySettings, Settings
from shiyi.errors import ConfigError, ShiyiError
from shiyi.index.embeddings import build_embedder
from shiyi.index.spelling import reading_note
from shiyi.llm.types import Message
from shiyi.memory.backends import open_job_queue, open_store
from shiyi.memory.intake.event_vectors import event_vectors, messages_before
from shiyi.memory.intake.relink import relink as relink_store
from shiyi.memory.intake.worker import EMBED, MemoryWorker
from shiyi.memory.intake.writer import MemoryWriter
from shiyi.memory.jobs import JobQueue
from shiyi.memory.lifecycle.asked_slots import slot_facts_first
from shiyi.memory.lifecycle.explicit import Remembered, Statement, write_statement
from shiyi.memory.lifecycle.forget import Forgetter
from shiyi.memory.lifecycle.forget_files import MEM0_LEDGER, DataPaths
from shiyi.memory.lifecycle.forget_journal import journal_dir
from shiyi.memory.lifecycle.forget_report import ForgetPlan, ForgetReport
from shiyi.memory.lifecycle.health import (
    MemoryHealth,
    add_store_wide,
    collect_health,
    collect_visible_health,
)
from shiyi.memory.lifecycle.pipeline import Lifecycle, ModelSource
from shiyi.memory.models import (
    Anchor,
    EventRecord,
    FactKind,
    FactRecord,
    History,
    MemoryHit,
    RelationFilter,
    Scope,
    as_read_at,
)
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.recall import prefetch
from shiyi.memory.recall.config import Mode, RerankWeights
from shiyi.memory.recall.intent import MessageIntent
from shiyi.memory.recall.present import format_hits
from shiyi.memory.recall.result_cache import ResultCache, SearchKey, counting
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.recall.scoring import placed_scores
from shiyi.memory.scopes import Viewer, Writers
from shiyi.memory.transfer.import_claims import CLAIMS, ClaimedConversation, claim_conversation

log = logging.getLogger(__name__)
REINDEX_CHUNK = 5000


class Memory:
    data_paths: DataPaths = DataPaths()
    """Files beside the store that forgetting scrubs too (set by :meth:`open`)."""
    own_queue: bool = True
    """The configured identity: its forgets may reach ids still queued (not yet readable,
    so their owner cannot be checked); a view's may not."""

    def __init__(
        self,
        store: MemoryStore,
        jobs: JobQueue,
        embedder: Embedder | None,
        settings: MemorySettings,
        *,
        extraction_model: ModelSource | None = None,
    ) -> None:
        self.results = ResultCache(ttl=settings.result_cache_seconds)
        if result_cache_on(settings):
            store = counting(store, self.results)  # every write invalidates cached results
        self.store = store
        self.jobs = jobs
        self.embedder = embedder
        self.settings = settings
        self.viewer = Viewer(settings.user_id, settings.agent_id, settings.lifecycle.workspace_id)
        self.writers = Writers.of(settings.lifecycle.workspace_writers, settings.user_id)
        """Who may write workspace memory (:class:`~shiyi.memory.scopes.Writers`)."""
        self.worker = MemoryWorker(
            store, jobs, embedder, batch=settings.embed_batch, lead_in=settings.lead_in
        )
        self.lifecycle = Lifecycle(
            store, jobs, embedder, settings, extraction_model or (lambda: None)
        )
        self.lifecycle.install(self.worker)
        self.writer = MemoryWriter(
            jobs, self.worker.wake, user_id=settings.user_id, agent_id=settings.agent_id
        )
        self.retriever = Retriever(
            store,
            embedder,
            RerankWeights(
                rrf_k=settings.rrf_k, recency_half_life_days=settings.recency_half_life_days
            ),
            candidates=settings.candidates,
            fusion=settings.fusion,
            configured=self.viewer,
        )

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        start_worker: bool = True,
        switch_model: bool = False,
        extraction_model: ModelSource | None = None,
        shared: bool = False,
    ) -> Memory:
        """Open the data dir's store (waiting for another owner up to ``lock_timeout``).

        ``switch_model`` (for ``shiyi memory reindex``) accepts a store embedded with another
        model and drops its vectors so they can be rebuilt with the configured one.
        ``extraction_model`` overrides the configured ``fast`` model for extraction.
        ``shared`` (PostgreSQL only; for ``shiyi worker``) leaves the data directory's lock to
        others: the queue is in the database, so any number of processes may work on it.
        """
        config = settings.memory
        ensure_private_dir(settings.data_dir)
        exclusive = not shared or config.store == "embedded"
        store, local_db = open_store(settings, switch_model=switch_model, exclusive=exclusive)
        jobs: JobQueue | None = None
        try:
            jobs = open_job_queue(config.store, local_db)
            # SQLite: we own the store, so anything 'running' was cut off by a crash.
            # PostgreSQL: only jobs of dead workers (lease expired, or pid gone here).
            jobs.recover()
            memory = cls(
                store,
                jobs,
                build_embedder(config, local_db, settings.cache_dir),
                config,
                extraction_model=extraction_model,
            )
        except BaseException:
            if jobs is not None:
                jobs.close()
            store.close()
            raise
        memory.data_paths = DataPaths(
            settings.sessions_db,
            settings.data_dir / "summaries.sqlite3",
            journal_dir(settings.memory_dir),
            settings.memory_dir / MEM0_LEDGER,
        )
        try:
            memory.finish_interrupted_forgets()
        except BaseException:
            memory.close(flush=False)
            raise
        memory.lifecycle.on_open()
        if start_worker:
            memory.worker.start()
        return memory

    def scoped(self, viewer: Viewer) -> Memory:
        """This memory as ``viewer`` (a server's caller) reads, writes and forgets it: the
        same store, queue and worker, its own identity.  Close this memory, never a view."""
        if viewer == self.viewer:
            return self
        view = copy.copy(self)
        view.viewer = viewer
        view.writer = MemoryWriter(
            self.jobs,
            self.worker.wake,
            user_id=viewer.user_id,
            agent_id=viewer.agent_id,
            echoes=self.writer.echoes,
        )
        view.own_queue = False
        return view

    # --- writing -----------------------------------------------------------------------

    def record_message(
        self,
        message: Message,
        *,
        message_id: int,
        session_id: str,
        run_id: str,
        iteration: int,
        ts: float | None = None,
        log_epoch: str = "",
    ) -> None:
        """Reply path: queue the message's segments (no graph write, no embedding here);
        ``log_epoch`` names the session log the row is in (see
        :mod:`shiyi.memory.intake.segments`)."""
        self.writer.record(
            message,
            message_id=message_id,
            session_id=session_id,
            run_id=run_id,
            iteration=iteration,
            ts=ts,
            log_epoch=log_epoch,
        )

    def import_events(self, events: Sequence[EventRecord]) -> None:
        """Queue events as they are (ids, owners): benchmarks and migrations."""
        for start in range(0, len(events), 500):
            self.writer.record_events(list(events[start : start + 500]))

    def import_conversation(
        self, session_id: str, events: Sequence[EventRecord]
    ) -> ClaimedConversation:
        """Queue one imported conversation's turns as this viewer's, under names no other
        owner uses (see :mod:`shiyi.memory.transfer.import_claims`); says what it was stored as."""
        with CLAIMS:
            claimed = claim_conversation(self.store, session_id, events, self.viewer, self.jobs)
            self.import_events(claimed.events)
        return claimed

    def remember(
        self,
        text: str,
        *,
        kind: FactKind = "semantic",
        key: str = "",
        confidence: float = 1.0,
        source_events: Sequence[str] = (),
        scope: Scope = "user",
        about: Sequence[str] = (),
        viewer: Viewer | None = None,
        trigger: str = "",
        steps: Sequence[str] = (),
    ) -> FactRecord:
        """Store an explicit memory (the user asked to remember it: long term at once).

        It goes through the same dedup and conflict rules as extracted facts: saying the same
        thing twice confirms it, a new value for the same ``key`` supersedes the old one.
        Without a ``key``, a plain statement of an attribute names its own ("my favourite
        colour is green", "I live in Munich": :mod:`~shiyi.memory.lifecycle.stated_slots`).
        Writing ``workspace`` scope needs the agent in ``memory.lifecycle.workspace_writers``.
        ``trigger`` and ``steps``: a procedure's when and what (a saved script's).
        :meth:`remember_outcome` also says what the write did.
        """
        statement = Statement(
            text, kind, key, confidence, scope, tuple(about), tuple(source_events), trigger,
            tuple(steps),
        )  # fmt: skip
        return self.remember_outcome(statement, viewer=viewer).fact

    def remember_outcome(self, statement: Statement, *, viewer: Viewer | None = None) -> Remembered:
        """:meth:`remember`, saying whether the fact is new, confirmed or replaced others."""
        who = viewer or self.viewer
        who.check_write(statement.scope, self.writers)
        remembered = write_statement(self.lifecycle.facts, statement, who)
        if remembered.created and self.embedder is not None:
            self.jobs.enqueue(EMBED, {"node": "fact", "ids": list(remembered.created)})
            self.worker.wake()
        return remembered

    def forget(self, ids: Sequence[str]) -> int:
        """Hard-delete these events/facts from every store; returns how many existed."""
        return self.forget_ids(ids).total

    def forgetter(self) -> Forgetter:
        """Plans (to preview) and executes hard deletes across every store."""
        return Forgetter(
            self.store,
            self.jobs,
            self.embedder,
            self.data_paths,
            # every stored copy: a superseded value or an expired fact holds the words too
            lambda q, n: self.search(q, limit=n, history="all"),
            self.viewer.owners(),
        )

    def within_scope(self, plan: ForgetPlan) -> ForgetPlan:
        """The part of ``plan`` this memory's viewer may delete: what it sees (the rest is
        not found, as if missing).  An entity node goes only if nothing else is about it."""
        who = self.viewer
        events = [e.id for e in self.store.get_events(plan.event_ids) if who.sees(e)]
        facts = [f.id for f in self.store.get_facts(plan.fact_ids) if who.sees_fact(f)]
        whole = len(events) + len(facts) == len(plan.event_ids) + len(plan.fact_ids)
        return dataclasses.replace(
            plan,
            event_ids=events,
            fact_ids=facts,
            queued_ids=plan.queued_ids if self.own_queue else [],
            entity_names=plan.entity_names if whole else [],
            hits=[h for h in plan.hits if h.id in {*events, *facts}],
        )

    def finish_interrupted_forgets(self) -> list[ForgetReport]:
        """Finish the forgets a killed process journaled but did not complete, before
        anything (the worker, a reconciliation with the session log) could copy a half
        deleted memory back."""
        done = self.forgetter().resume_pending()
        for report in done:
            log.warning(
                "memory: finished an interrupted forget of %s (%d events, %d facts)%s",
                report.target,
                report.events,
                report.facts,
                "; its bytes stay in the graph file until `shiyi memory compact`"
                if report.bytes_remain
                else "",
            )
        return done

    def forget_ids(self, ids: Sequence[str], *, compact: bool = False) -> ForgetReport:
        forgetter = self.forgetter()
        plan = self.within_scope(forgetter.plan_ids(ids))
        return self._finish_forget(forgetter.execute(plan), compact)

    def forget_entity(self, name: str, *, compact: bool = False) -> ForgetReport:
        """The entity, the facts about it and the events mentioning it (the viewer's)."""
        forgetter = self.forgetter()
        plan = self.within_scope(forgetter.plan_entity(name))
        return self._finish_forget(forgetter.execute(plan), compact)

    def forget_query(self, query: str, *, limit: int = 5, compact: bool = False) -> ForgetReport:
        """What ``search(query, limit=limit)`` finds."""
        forgetter = self.forgetter()
        plan = self.within_scope(forgetter.plan_query(query, limit))
        return self._finish_forget(forgetter.execute(plan), compact)

    def forget_user(self, user_id: str, *, compact: bool = False) -> ForgetReport:
        """Every event, fact and session of one user."""
        forgetter = self.forgetter()
        return self._finish_forget(forgetter.execute(forgetter.plan_user(user_id)), compact)

    def _finish_forget(self, report: ForgetReport, compact: bool) -> ForgetReport:
        if compact and report.total:
            self.compact()
            report.compacted = True
        return report

    def compact(self) -> None:
        """Rewrite the graph file so deleted memories leave no bytes behind (seconds at 100k
        events); the worker pauses meanwhile."""
        running = self.worker.running
        self.worker.stop()
        try:
            self.store.compact()
        finally:
            if running:
                self.worker.start()

    def follows(self) -> RelationFilter:
        """The relations this memory's viewer may see (its own; the owner-less older ones
        only as the configured identity)."""
        return self.viewer.relations(self.retriever.configured)

    def health(self) -> MemoryHealth:
        """The whole store (``shiyi memory health`` on the data directory)."""
        return collect_health(self.store, self.jobs)

    def visible_health(self) -> MemoryHealth:
        """What this memory's viewer may read; the store-wide queue, index and cache numbers
        only for the configured identity (``GET /v1/memory/health``)."""
        configured = self.viewer == self.retriever.configured
        health = collect_visible_health(self.store, self.viewer, configured)
        if configured:
            add_store_wide(health, self.store, self.jobs)
        return health

    # --- reading -----------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        mode: Mode = "hybrid",
        kinds: Sequence[str] | None = None,
        limit: int = 5,
        viewer: Viewer | None = None,
        history: History | None = None,
    ) -> list[MemoryHit]:
        """What ``viewer`` (default: this memory's identity) may see; counts as a retrieval,
        so short-term facts found often enough are promoted to long term.  The same search
        again within ``memory.result_cache_seconds`` and no write since is answered from the
        result cache (still counted as a retrieval)."""
        who = viewer or self.viewer
        key = SearchKey.of(who, query, mode, kinds, limit, history)
        generation = self.results.generation
        if result_cache_on(self.settings) and (cached := self.results.get(key)) is not None:
            self.retriever.count_access(cached)  # still a retrieval: counts and promotion
            self._count_retrieval(cached)
            self.results.update(key, generation, cached)
            return cached
        # each hit with its place's score: a reader thresholding or sorting by score keeps
        # the order recall chose (the newer of two equal answers first)
        found = self.retriever.search(
            query, mode=mode, kinds=kinds, limit=limit, viewer=who, history=history
        )
        if mode == "hybrid":  # "where do I live": the user's current "lives in" first
            found = slot_facts_first(query, found, self.store, who, kinds)[:limit]
        hits = placed_scores(found)
        self._count_retrieval(hits)
        if result_cache_on(self.settings):
            self.results.put(key, generation, hits)
        return hits

    def _count_retrieval(self, hits: list[MemoryHit]) -> None:
        promoted = set(self.lifecycle.promote_retrieved(hits))
        for hit in hits:
            hit.access_count += 1
            if hit.id in promoted:
                hit.tier = "long"

    def read_as(self, query: str) -> dict[str, str]:
        """How a search reads ``query``'s typing slips (:meth:`Retriever.read_as`)."""
        return self.retriever.read_as(query, self.viewer)

    def query_text(
        self,
        query: str,
        *,
        mode: Mode = "hybrid",
        kinds: Sequence[str] | None = None,
        limit: int = 5,
    ) -> str:
        """The query_memory tool's answer: the memories, after how the query was read."""
        found = format_hits(self.search(query, mode=mode, kinds=kinds, limit=limit))
        return reading_note(self.read_as(query)) + found

    def prefetch(
        self,
        message: str,
        keep: Callable[[MemoryHit], bool] = lambda hit: True,
        *,
        intent: MessageIntent | None = None,
        previous: Sequence[str] = (),
    ) -> list[MemoryHit]:
        """1-2 keyword matches for the context builder: cheap (no embedding), a hint only.
        ``keep`` filters before the limit, so a dropped hit leaves its place to the next.
        With the message's ``intent`` (and the session's ``previous`` turns), the memories
        that intent wants (:mod:`shiyi.memory.recall.prefetch`); without, the best matches."""
        limit = self.settings.prefetch_limit
        if limit == 0 or not message.strip():
            return []
        if intent is not None:
            asked = prefetch.Asked(intent, message, previous, keep)
            hits = prefetch.for_intent(self.retriever, self.viewer, asked, self.settings)
        else:
            found = self.retriever.search(
                message, mode="keyword", limit=2 * limit, touch=False, viewer=self.viewer
            )
            hits = prefetch.offered(message, found, keep)[:limit]
        return slot_facts_first(message, hits, self.store, self.viewer, keep=keep)[:limit]

    def expand(
        self, anchor_key: str, window: int = 3, *, viewer: Viewer | None = None
    ) -> list[EventRecord]:
        who = viewer or self.viewer
        return [e for e in self.store.expand(parse_anchor(anchor_key), window) if who.sees(e)]

    def get(
        self, memory_id: str, *, viewer: Viewer | None = None
    ) -> EventRecord | FactRecord | None:
        """One event or fact by id, if ``viewer`` may see it (None otherwise)."""
        who = viewer or self.viewer
        found: list[EventRecord | FactRecord] = [*self.store.get_events([memory_id])]
        found += self.store.get_facts([memory_id]) if not found else []
        if not found or not who.sees(found[0]):
            return None
        return as_read_at(found[0], time.time()) if isinstance(found[0], FactRecord) else found[0]

    # --- lifecycle ---------------------------------------------------------------------

    def consolidate(self, session_id: str, reason: str = "session end") -> None:
        """Queue the session's consolidation (decisions, conventions, todos, procedures)."""
        self.lifecycle.queue_consolidation(session_id, reason)
        self.worker.wake()

    def archive_run(self, run_id: str, goal: str, status: str) -> None:
        """Queue the finished run's archive as an anchored episodic memory."""
        self.lifecycle.queue_archive(run_id, goal, status)
        self.worker.wake()

    def history(
        self, *, key: str = "", entity: str = "", viewer: Viewer | None = None
    ) -> list[FactRecord]:
        """Every version of a fact slot, oldest first: superseded ones carry ``valid_to``."""
        who = viewer or self.viewer
        names = [e.name for e in self.store.find_entities([entity])] if entity else []
        if entity and not names:
            raise ShiyiError(f"no remembered entity is called {entity!r}")
        statuses = ("active", "pending", "superseded", "expired")
        attribute = self.lifecycle.facts.attributes  # "city" finds "lives in" versions too
        wanted = attribute(key)
        facts = self.store.slot_candidates(names, wanted.lookup_keys if key else [], statuses)
        chosen = [
            f for f in facts if who.sees_fact(f) and (not key or attribute(f.key).same(wanted))
        ]
        now = time.time()
        chosen = [as_read_at(f, now) for f in chosen]
        # an edited fact and the words it replaced start together: the closed one first
        return sorted(
            chosen, key=lambda f: (f.valid_from or f.created_at, f.created_at, f.valid_to is None)
        )

    def sweep(self) -> list[str]:
        """Expire short-term facts past their TTL now (the worker also does it periodically)."""
        return self.lifecycle.sweep()

    def reindex(self, progress: Callable[[int], None] | None = None) -> int:
        """Embed every event that has no vector yet (after a crash, import or model change).

        Works in chunks large enough for the store's bulk path (index rebuilt once a chunk).
        """
        if self.embedder is None:
            raise ConfigError("memory.embedder is 'none': there is nothing to embed with.")
        done = 0
        while batch := self.store.events_missing_embeddings(REINDEX_CHUNK):
            before = messages_before(self.store, batch) if self.settings.lead_in else {}
            vectors = event_vectors(self.embedder, batch, before)
            pairs = [(e.id, v) for e, v in zip(batch, vectors, strict=True)]
            self.store.set_embeddings("event", pairs)
            done += len(batch)
            if progress is not None:
                progress(done)
        return done

    def relink(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Link every stored turn to its names and topics again and index its words again
        (:mod:`shiyi.memory.intake.relink`); returns how many turns."""
        return relink_store(self.store, self.worker.link_events, progress)

    def stats(self) -> dict[str, int]:
        counts = self.store.counts()
        counts["pending_jobs"] = self.jobs.pending_count()
        return counts

    def close(self, *, flush: bool = True) -> None:
        """``flush=False``: a ``shiyi worker`` told to stop leaves queued jobs to the others."""
        self.retriever.flush()  # a background access-count write must not outlive the store
        self.worker.stop()
        if flush:
            self.worker.flush_graph()
        self.jobs.close()
        self.store.close()


def result_cache_on(settings: MemorySettings) -> bool:
    """Only where every write passes through this process: PostgreSQL may have other
    writers (``shiyi worker``), whose writes could not invalidate this process's cache."""
    return settings.result_cache_seconds > 0 and settings.store == "embedded"


def parse_anchor(key: str) -> Anchor:
    """``run_id:iteration:segment`` (as shown to the model) back into an :class:`Anchor`."""
    run_id, _, rest = key.rpartition(":")
    run_id, _, iteration = run_id.rpartition(":")
    try:
        return Anchor("", run_id, int(iteration), int(rest), "response", 0.0)
    except ValueError:
        raise ShiyiError(
            f"{key!r} is not an anchor; anchors look like run_abc123:2:0 (run:iteration:segment)"
        ) from None
