"""The lifecycle's background jobs: extraction after each user message, consolidation at
session end, run archives, the expiry sweep and promotion of often-used facts.

Everything here runs in the memory worker thread, after the reply: the reply path only
queues a job.  Extraction and consolidation need the ``fast`` model; without a usable one
their jobs wait in the queue (deferred, not failed) while heuristic entity linking goes on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from shiyi.config.settings import MemorySettings
from shiyi.errors import JobDeferred, ModelNotReady
from shiyi.llm.protocol import ChatModel
from shiyi.memory.intake.worker import EMBED, MemoryWorker
from shiyi.memory.jobs import Job, JobQueue
from shiyi.memory.lifecycle.consolidation import CONSOLIDATION_PROMPT, archive_fact, used_fact_ids
from shiyi.memory.lifecycle.extraction import (
    ExtractedFact,
    Extraction,
    WindowMessage,
    extract,
    render_window,
)
from shiyi.memory.lifecycle.facts import FactWriter
from shiyi.memory.lifecycle.lifetimes import clear_default_lifetimes
from shiyi.memory.lifecycle.observations import Observation, WriteReport
from shiyi.memory.lifecycle.resolution import EntityResolver, Mention
from shiyi.memory.lifecycle.statements import named_speaker, stating_turn
from shiyi.memory.lifecycle.temporal import day_start, find_dates, resolve_relative
from shiyi.memory.models import Anchor, EventRecord, MemoryHit, RelationRecord
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.scopes import Viewer

log = logging.getLogger(__name__)

EXTRACT, CONSOLIDATE, ARCHIVE = "extract", "consolidate", "archive"
CONVERSATION = ("user_message", "response", "imported")
CONFIRM_CUES = re.compile(
    r"\b(remember (this|that)|don'?t forget|keep (this|that) in mind|note that)\b"
    r"|记住|别忘了|记一下",
    re.IGNORECASE,
)
T = TypeVar("T")
ModelSource = Callable[[], ChatModel | None]


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from a worker thread (or, in tests, from inside a running loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


class Lifecycle:
    def __init__(
        self,
        store: MemoryStore,
        jobs: JobQueue,
        embedder: Embedder | None,
        settings: MemorySettings,
        model: ModelSource,
    ) -> None:
        self.store = store
        self.jobs = jobs
        self.settings = settings
        self.config = settings.lifecycle
        self._model = model
        self.resolver = EntityResolver(store, embedder, similarity=self.config.entity_similarity)
        self.facts = FactWriter(store, embedder, self.config, self.resolver, settings.user_id)
        self.embeds = embedder is not None

    def install(self, worker: MemoryWorker) -> None:
        worker.register(EXTRACT, self.handle_extract, ready=self.model_ready)
        worker.register(CONSOLIDATE, self.handle_consolidate, ready=self.model_ready)
        worker.register(ARCHIVE, self.handle_archive, batch=8)
        worker.every(self.config.sweep_interval, self.sweep)
        worker.after_ingest.append(self.queue_extraction)

    def model_ready(self) -> bool:
        return self.config.extraction and self._model() is not None

    def viewer_of(self, event: EventRecord) -> Viewer:
        return Viewer(event.user_id, event.agent_id, self.config.workspace_id)

    # --- queueing (cheap; called from the ingest handler or the agent) ---------------------

    def queue_extraction(self, events: Sequence[EventRecord]) -> None:
        if not self.config.extraction:
            return
        for event in events:
            if event.segment_type == "user_message":
                self.jobs.enqueue_once(EXTRACT, {"event_id": event.id})

    def queue_consolidation(self, session_id: str, reason: str) -> None:
        """One open consolidation per session; none with extraction off, where no model
        would ever run it and the jobs piled up for good."""
        if not self.config.extraction:
            return
        waiting = self.jobs.open_payloads(CONSOLIDATE)
        if any(p.get("session_id") == session_id for p in waiting):
            return
        self.jobs.enqueue(CONSOLIDATE, {"session_id": session_id, "reason": reason})

    def on_open(self) -> None:
        """What a store needs once it is open: drop jobs that can never run, and give
        long-term facts that still carry the old default expiry back their lifetime."""
        self.discard_impossible()
        clear_default_lifetimes(self.store, self.config)

    def discard_impossible(self) -> int:
        """On start: with extraction off, queued extraction and consolidation jobs can never
        run (they were queued while it was on, or by an older shiyi); drop them."""
        if self.config.extraction:
            return 0
        dropped = self.jobs.discard([EXTRACT, CONSOLIDATE])
        if dropped:
            log.info("memory: dropped %d extraction jobs (extraction is off)", dropped)
        return dropped

    def queue_archive(self, run_id: str, goal: str, status: str) -> None:
        self.jobs.enqueue_once(ARCHIVE, {"run_id": run_id, "goal": goal, "status": status})

    # --- extraction --------------------------------------------------------------------------

    def handle_extract(self, jobs: list[Job]) -> None:
        for job in jobs:
            found = self.store.get_events([job.payload["event_id"]])
            if found:  # a forgotten event leaves nothing to extract
                self.extract_around(found[0])

    def extract_around(self, event: EventRecord) -> WriteReport:
        window = self.store.session_window(
            event.session_id, event.ts, CONVERSATION, self.config.window
        )
        window = _owned_like(window, event) or [event]
        ids = [e.id for e in window]
        known = self.store.mentioned_entities(ids)
        text = render_window(_window_messages(window), known)
        extraction = self._ask(text, None)
        confirm = bool(CONFIRM_CUES.search(event.content)) and event.role == "user"
        report = self.apply(
            extraction, window, self.viewer_of(event), source="extraction", long_term=confirm
        )
        if confirm:
            self.promote(self.store.facts_derived_from(ids))
        return report

    def _ask(self, text: str, prompt: str | None) -> Extraction:
        model = self._model()
        if model is None:
            raise JobDeferred("no usable extraction model (configure models.fast)", retry_in=300)
        try:
            if prompt is None:
                return run_sync(extract(model, text))
            return run_sync(extract(model, text, system_prompt=prompt))
        except ModelNotReady as exc:
            raise JobDeferred(str(exc), retry_in=exc.retry_in) from exc

    def apply(
        self,
        extraction: Extraction,
        window: Sequence[EventRecord],
        viewer: Viewer,
        *,
        source: str,
        long_term: bool = False,
    ) -> WriteReport:
        """Resolve the extraction's entities, then write its relations and facts (each dated
        by the window's turn that states it, not by the window's last message)."""
        said_at = window[-1].ts
        names = {n: Mention(n) for r in extraction.relations for n in (r.source, r.target)}
        names.update({n: Mention(n) for f in extraction.facts for n in f.about})
        names.update(
            {e.name: Mention(e.name, e.type, tuple(e.aliases)) for e in extraction.entities}
        )
        if extraction.facts:  # a named speaker is what their own facts are about
            speakers = {named_speaker(e) for e in window} - {""}
            names.update({n: Mention(n, "person") for n in speakers if n not in names})
        canonical = self.resolver.resolve(list(names.values()))
        relations = [
            RelationRecord(
                canonical[r.source],
                canonical[r.target],
                r.type,
                r.weight,
                said_at,
                user_id=viewer.user_id,
                agent_id=viewer.agent_id,
            )
            for r in extraction.relations
            if r.source in canonical and r.target in canonical
        ]
        if relations:
            self.store.add_relations(relations)
        observations = [
            self._observation(f, canonical, window, source, long_term, self._rivals(f, extraction))
            for f in extraction.facts
        ]
        report = self.facts.write(observations, viewer)
        if report.created and self.embeds:
            self.jobs.enqueue(EMBED, {"node": "fact", "ids": report.created})
        return report

    def _rivals(self, fact: ExtractedFact, extraction: Extraction) -> list[str]:
        """Other values this extraction gives ``fact``'s attribute."""
        attribute = self.facts.attributes(fact.key)
        return [
            other.value
            for other in extraction.facts
            if other.value != fact.value and self.facts.attributes(other.key).same(attribute)
        ]

    @staticmethod
    def _observation(
        fact: ExtractedFact,
        canonical: dict[str, str],
        window: Sequence[EventRecord],
        source: str,
        long_term: bool,
        rivals: Sequence[str],
    ) -> Observation:
        stated = stating_turn(fact.key, fact.value, window, rivals)
        said_at = stated.ts
        value, in_value = resolve_relative(fact.value, said_at)
        when = find_dates(fact.when, said_at) if fact.when else []
        day = when[0].day if when else in_value
        return Observation(
            key=fact.key,
            value=value,
            confidence=fact.confidence,
            kind=fact.kind,
            scope=fact.scope,
            about=[canonical.get(a, a) for a in fact.about],
            valid_from=day_start(day) if day is not None else said_at,
            trigger=fact.trigger,
            steps=list(fact.steps),
            source=source,
            anchor=stated.anchor.key(),
            source_events=[e.id for e in window],  # the whole window: what expand shows
            long_term=long_term,
            said_at=said_at,
            said_in=[stated.id],
            speaker=canonical.get(named_speaker(stated), named_speaker(stated)),
        )

    # --- consolidation and archives ---------------------------------------------------------

    def handle_consolidate(self, jobs: list[Job]) -> None:
        for job in jobs:
            self.consolidate(job.payload["session_id"])

    def consolidate(self, session_id: str) -> WriteReport:
        """Decisions, conventions, preferences, todos and procedures of a whole session."""
        window = self.store.session_window(
            session_id, float("inf"), CONVERSATION, self.config.consolidate_messages
        )
        if not window:
            return WriteReport()
        window = _owned_like(window, window[-1])
        text = render_window(_window_messages(window), self.store.mentioned_entities([]))
        extraction = self._ask(text, CONSOLIDATION_PROMPT)
        return self.apply(extraction, window, self.viewer_of(window[-1]), source="consolidation")

    def handle_archive(self, jobs: list[Job]) -> None:
        for job in jobs:
            payload = job.payload
            self.archive(payload["run_id"], payload["goal"], payload["status"])

    def archive(self, run_id: str, goal: str, status: str) -> WriteReport:
        """The finished run as one anchored episodic memory; ``expand`` reaches its turns."""
        events = self.store.expand(Anchor("", run_id, 0, 0, "user_message", 0.0), 100_000)
        if not events or not _goal_still_said(goal, events):
            return WriteReport()
        events = _owned_like(events, events[0])
        observation = archive_fact(run_id, goal, status, events)
        report = self.facts.write([observation], self.viewer_of(events[0]))
        if report.created and self.embeds:
            self.jobs.enqueue(EMBED, {"node": "fact", "ids": report.created})
        self._score_procedures(used_fact_ids(events), succeeded=status == "completed")
        return report

    def _score_procedures(self, fact_ids: list[str], *, succeeded: bool) -> None:
        """Procedures retrieved during a run learn from its outcome (success rate, usage)."""
        procedures = [f for f in self.store.get_facts(fact_ids) if f.kind == "procedural"]
        for fact in procedures:
            fact.usage_count += 1
            previous = (
                fact.success_rate if fact.success_rate is not None else 1.0 if succeeded else 0.0
            )
            fact.success_rate = previous + (float(succeeded) - previous) / fact.usage_count
        if procedures:
            self.store.upsert_facts(procedures)

    # --- tiers --------------------------------------------------------------------------

    def sweep(self, now: float | None = None) -> list[str]:
        expired = self.store.expire_facts(time.time() if now is None else now)
        if expired:
            log.info("memory sweep: %d short-term facts expired", len(expired))
        return expired

    def promote(self, fact_ids: Sequence[str]) -> list[str]:
        """Short-term facts to long term (no expiry)."""
        facts = [f for f in self.store.get_facts(fact_ids) if f.tier == "short"]
        for fact in facts:
            fact.tier, fact.expires_at = "long", None
        if facts:
            self.store.upsert_facts(facts)
        return [f.id for f in facts]

    def promote_retrieved(self, hits: Sequence[MemoryHit]) -> list[str]:
        """Facts retrieved ``promote_after`` times (this retrieval included) go long term."""
        due = [
            h.id
            for h in hits
            if h.node == "fact"
            and h.tier == "short"
            and h.access_count + 1 >= self.config.promote_after
        ]
        return self.promote(due) if due else []


def _window_messages(events: Sequence[EventRecord]) -> list[WindowMessage]:
    return [WindowMessage(e.role, e.content, e.ts) for e in events]


def _owned_like(events: list[EventRecord], like: EventRecord) -> list[EventRecord]:
    """The events of ``like``'s owner: what one owner's facts are drawn from, should a
    session or run ever hold another's turns (import claims keep them apart; this holds
    even if they did not)."""
    return [e for e in events if (e.user_id, e.agent_id) == (like.user_id, like.agent_id)]


def _goal_still_said(goal: str, events: Sequence[EventRecord]) -> bool:
    """Whether a user message the run still holds says its goal.  An archive queued after a
    forget took that message (the run ended while the forget ran, or the worker was slow to
    queue it) would otherwise quote the forgotten goal from its job's payload."""
    wanted = " ".join(goal.split())
    return not wanted or any(
        wanted in " ".join(e.content.split()) for e in events if e.segment_type == "user_message"
    )
