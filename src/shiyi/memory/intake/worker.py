"""The background worker: turns queued jobs into graph nodes, entity links and vectors.

Job kinds: ``ingest`` (events into the graph), ``entities`` (heuristic entity links),
``embed`` (vectors for events or facts, batched).  Every handler is idempotent, so a job
re-run after a crash changes nothing that was already done.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from shiyi.errors import JobDeferred
from shiyi.index.text import query_terms
from shiyi.memory.intake.event_vectors import event_vectors, messages_before
from shiyi.memory.jobs import Job, JobQueue
from shiyi.memory.models import EntityRecord, EventRecord, NodeKind
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.text.entities import extract_entities, normalize_name
from shiyi.memory.text.topics import extract_topics

log = logging.getLogger(__name__)

INGEST, ENTITIES, EMBED = "ingest", "entities", "embed"
MAX_DEFER = 0.5
"""Longest the worker waits for a busy server before its next batch (seconds)."""
MAX_HOLD = 30.0
"""Longest :attr:`MemoryWorker.hold_heavy_while` holds embedding and model work back
(seconds): replies go first, but a process that is never idle still gets its memory."""
# Ingest first: events must be queryable before they are enriched.
ORDER = (INGEST, ENTITIES, EMBED)


@dataclass(slots=True)
class ExtraKind:
    """A job kind added by a higher layer (the lifecycle): handler, batch size, readiness."""

    handle: Callable[[list[Job]], None]
    batch: int = 1
    ready: Callable[[], bool] = lambda: True


@dataclass(slots=True)
class Periodic:
    run: Callable[[], object]
    interval: float
    last: float = 0.0


def event_payload(events: list[EventRecord]) -> dict[str, Any]:
    return {"events": [asdict(e) for e in events]}


def backoff(attempt: int) -> float:
    return float(min(300, 2**attempt))


class MemoryWorker:
    def __init__(
        self,
        store: MemoryStore,
        jobs: JobQueue,
        embedder: Embedder | None,
        *,
        batch: int = 64,
        idle_poll: float = 2.0,
        lead_in: bool = True,
    ) -> None:
        self.store = store
        self.lead_in = lead_in
        """Whether a short message's vector carries the message before it
        (:mod:`~shiyi.memory.intake.event_vectors`)."""
        self.jobs = jobs
        self.embedder = embedder
        self.batch = batch
        self.idle_poll = idle_poll
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handlers: dict[str, Callable[[list[Job]], None]] = {
            INGEST: self._ingest,
            ENTITIES: self._entities,
            EMBED: self._embed,
        }
        self._extra: dict[str, ExtraKind] = {}
        self._periodic: list[Periodic] = []
        self.after_ingest: list[Callable[[list[EventRecord]], None]] = []
        self.defer_while: Callable[[], bool] | None = None
        """While this says True (a server still owes requests their first event), the worker
        waits before its next batch: Kuzu compiles queries holding the GIL, which delayed
        those events by 100+ ms in a burst of 50 sessions."""
        self.hold_heavy_while: Callable[[], bool] | None = None
        """While this says True (a reply is being computed on this machine), only the cheap
        kinds run (ingest, entities: the keyword index stays current); embedding and model
        work wait, up to :data:`MAX_HOLD`: an embedding batch took a first local reply from
        2.9 to 3.9 s."""
        self._held_since: float | None = None
        self.stop_timeout = 10.0
        """How long :meth:`stop` waits for the batch in hand."""
        self.events_done = 0
        """Events through their last step here (embedded, or linked without an embedder):
        what ``shiyi memory import`` counts as turns done."""

    def register(
        self,
        kind: str,
        handle: Callable[[list[Job]], None],
        *,
        batch: int = 1,
        ready: Callable[[], bool] = lambda: True,
    ) -> None:
        """Process ``kind`` jobs after the built-in kinds; not-ready kinds wait in the queue."""
        self._extra[kind] = ExtraKind(handle, batch, ready)
        self._handlers[kind] = handle

    def every(self, interval: float, run: Callable[[], object]) -> None:
        """Run ``run`` from the worker thread at most once per ``interval`` seconds."""
        self._periodic.append(Periodic(run, interval))

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="shiyi-memory", daemon=True)
            self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float | None = None) -> None:
        """Stop the thread, waiting up to ``timeout`` (default :attr:`stop_timeout`) for its
        batch.  A batch that outlives the wait (an embedding on a loaded machine) finds the
        store closed under it and gives up quietly: its jobs stay ``running``, and the next
        start puts them back in the queue (:meth:`JobQueue.recover`)."""
        self._stop.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(self.stop_timeout if timeout is None else timeout)
            if thread.is_alive():
                log.info("the memory worker is still finishing a batch; it runs again next start")
                return  # it will see the stop flag and exit
        self._stop.clear()  # a stopped worker may be started again

    def _yield_to_replies(self, most: float = MAX_DEFER) -> None:
        busy = self.defer_while
        deadline = time.monotonic() + most
        while busy is not None and busy() and time.monotonic() < deadline:
            if self._stop.wait(0.005):
                return

    def _holding_heavy(self) -> bool:
        hold = self.hold_heavy_while
        if hold is None or not hold():
            self._held_since = None
            return False
        now = time.monotonic()
        if self._held_since is None:
            self._held_since = now
        if now - self._held_since < MAX_HOLD:
            return True
        self._held_since = now  # one batch now, then hold again
        return False

    def run_periodic(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        for task in self._periodic:
            if now - task.last >= task.interval:
                task.last = now
                try:
                    task.run()
                except Exception:
                    log.exception("periodic memory task failed")

    def _loop(self) -> None:
        _lower_priority()
        while not self._stop.is_set():
            self._yield_to_replies()
            self.run_periodic()
            try:
                done = self.run_once(light_only=self._holding_heavy())
            except Exception:  # never let the worker die; the job records the error
                if self._stop.is_set():  # the store closed under a batch that outlived stop()
                    log.debug("memory worker stopped mid-batch", exc_info=True)
                    return
                log.exception("memory worker iteration failed")
                done = 0
            if not done:
                self._wake.wait(self.idle_poll)
                self._wake.clear()

    # --- processing --------------------------------------------------------------------

    def run_once(self, *, light_only: bool = False, embed_jobs: int | None = None) -> int:
        """Process one batch of the most urgent kind; returns how many jobs were handled.
        ``light_only``: only ingest and entities (no embedding, no model).  ``embed_jobs``:
        at most this many embed jobs in the batch (default ``batch``): smaller batches let
        an import report progress more often."""
        for kind in ORDER:
            if kind == EMBED and (self.embedder is None or light_only):
                continue
            limit = (embed_jobs or self.batch) if kind == EMBED else 16
            jobs = self.jobs.claim([kind], limit=limit)
            if jobs:
                self._handle(kind, jobs)
                return len(jobs)
        for kind, extra in self._extra.items():
            if light_only or not extra.ready():
                continue
            jobs = self.jobs.claim([kind], limit=extra.batch)
            if jobs:
                self._handle(kind, jobs)
                return len(jobs)
        return 0

    def ready_kinds(self) -> list[str]:
        kinds = [k for k in ORDER if k != EMBED or self.embedder is not None]
        return kinds + [k for k, extra in self._extra.items() if extra.ready()]

    def flush_graph(self, timeout: float = 10.0) -> None:
        """Ingest and link what is queued (fast, no model): used before the process exits,
        so the graph and keyword index are current; embedding waits for the next start."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            jobs = self.jobs.claim([INGEST], limit=16) or self.jobs.claim([ENTITIES], limit=16)
            if not jobs:
                return
            self._handle(jobs[0].kind, jobs)

    def drain(self, timeout: float = 60.0) -> bool:
        """Process until the queue is empty (or only failing jobs wait); True if emptied."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.run_once():
                return self.jobs.pending_count(self.ready_kinds()) == 0
        return False

    def _handle(self, kind: str, jobs: list[Job]) -> None:
        try:
            self._handlers[kind](jobs)
        except JobDeferred as wait:
            for job in jobs:
                self.jobs.defer(job, str(wait), retry_in=wait.retry_in)
            return
        except Exception as exc:
            if self._stop.is_set():  # the store closed under this batch: not the jobs' fault
                log.info("memory %s batch stopped by close; it runs again next start", kind)
                return
            log.warning("memory %s job failed: %s", kind, exc)
            for job in jobs:
                self.jobs.fail(job, f"{type(exc).__name__}: {exc}", retry_in=backoff(job.attempts))
            return
        self.jobs.complete([job.id for job in jobs])
        self.events_done += self._finished_events(kind, jobs)

    def _finished_events(self, kind: str, jobs: list[Job]) -> int:
        last = EMBED if self.embedder is not None else ENTITIES
        if kind != last:
            return 0
        return sum(len(j.payload["ids"]) for j in jobs if j.payload.get("node", "event") == "event")

    def _ingest(self, jobs: list[Job]) -> None:
        events = [EventRecord(**raw) for job in jobs for raw in job.payload["events"]]
        self.store.add_events(events)
        for hook in self.after_ingest:
            hook(events)
        ids = [e.id for e in events]
        # Follow-ups in jobs of at most ``batch`` ids: with several worker processes on one
        # queue (PostgreSQL), a bulk import's follow-ups then spread over all of them
        # instead of one worker claiming a whole import's embedding at once.
        for start in range(0, len(ids), self.batch):
            chunk = ids[start : start + self.batch]
            self.jobs.enqueue(ENTITIES, {"ids": chunk})
            if self.embedder is not None:
                self.jobs.enqueue(EMBED, {"node": "event", "ids": chunk})

    def _entities(self, jobs: list[Job]) -> None:
        self.link_events([i for job in jobs for i in job.payload["ids"]])

    def link_events(self, ids: Sequence[str]) -> None:
        """Link events to the entities they name: newly extracted ones, and known ones.

        Matching known entity names catches what the extractor's heuristics miss (a name at
        the start of a sentence, a lower-case mention), which keeps the graph connected.
        Linking again is harmless: entities merge and a repeated link is ignored.
        """
        events = self.store.get_events(ids)
        found: dict[str, EntityRecord] = {}
        extracted: dict[str, set[str]] = {}
        terms: dict[str, set[str]] = {}
        for event in events:
            entities = extract_entities(event.content) + extract_topics(event.content)
            for entity in entities:
                found.setdefault(entity.name, entity)
            extracted[event.id] = {entity.name for entity in entities}
            terms[event.id] = {normalize_name(term) for term in query_terms(event.content)}
        candidates = set().union(*terms.values()) if terms else set()
        known = {e.name for e in self.store.find_entities(sorted(candidates))} | set(found)
        mentions = [
            (event.id, name)
            for event in events
            for name in sorted(extracted[event.id] | (terms[event.id] & known))
        ]
        if found:
            self.store.upsert_entities(list(found.values()))
        if mentions:
            self.store.link_mentions(mentions)

    def _embed(self, jobs: list[Job]) -> None:
        assert self.embedder is not None
        by_node: dict[str, list[str]] = {}
        for job in jobs:
            by_node.setdefault(job.payload.get("node", "event"), []).extend(job.payload["ids"])
        for node, ids in by_node.items():
            pairs = self._fact_vectors(ids) if node == "fact" else self._event_vectors(ids)
            if pairs:
                self.store.set_embeddings(_node(node), pairs)

    def _fact_vectors(self, ids: list[str]) -> list[tuple[str, list[float]]]:
        assert self.embedder is not None
        facts = self.store.get_facts(ids)
        vectors = self.embedder.embed([f.text for f in facts]) if facts else []
        return [(f.id, v) for f, v in zip(facts, vectors, strict=True)]

    def _event_vectors(self, ids: list[str]) -> list[tuple[str, list[float]]]:
        assert self.embedder is not None
        # An echo (a memory tool's traffic, a reply quoting memories) is never recalled, so a
        # vector of it would only take the vector path's places and the embedder's time.
        events = [e for e in self.store.get_events(ids) if not e.derived]
        if not events:
            return []
        before = messages_before(self.store, events) if self.lead_in else {}
        vectors = event_vectors(self.embedder, events, before)
        return [(e.id, v) for e, v in zip(events, vectors, strict=True)]


def _lower_priority(niceness: int = 10) -> None:
    """Embedding and extraction yield the CPU to the thread serving replies: on Linux a
    thread's nice value is its own (``setpriority`` on its native id)."""
    try:
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, min(19, os.getpriority(os.PRIO_PROCESS, me) + niceness))
    except (AttributeError, OSError):  # not Linux, or not permitted: run at normal priority
        log.debug("memory worker runs at normal priority")


def _node(name: str) -> NodeKind:
    if name not in ("event", "fact", "entity"):
        raise ValueError(f"unknown node kind {name!r} in an embed job")
    return name  # type: ignore[return-value]
