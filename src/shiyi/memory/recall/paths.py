"""Running the recall paths side by side and loading the records of what they found.

Measured at 100k events, the hybrid query's time went to the vector path (embedding the query,
then scanning the vector matrix) and to loading records (one Kuzu primary-key lookup per id,
until events were mirrored in SQLite: see :mod:`shiyi.memory.kuzu.event_rows`).  numpy, SQLite and
Kuzu all release the GIL, so while the calling thread embeds and scans, the other paths
(keyword, graph, recency) run in pool threads, one each; the records of every path's ids are
then loaded in one go.

Each path also says what it knows about its ids, so a record is looked up only where it can
be: vector, graph and keyword ids are known events or facts (the keyword index records each
document's kind), and recency ids come with their records.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from shiyi.errors import StorageError
from shiyi.memory.models import (
    EventRecord,
    FactRecord,
    History,
    NodeKind,
    Scored,
    as_read_at,
    shown_statuses,
)
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer

log = logging.getLogger(__name__)

_POOL_THREADS = 4
"""Concurrent searches beyond this queue for a thread; a pool task never waits on another."""
_pools: dict[str, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _shared_pool(
    name: str, threads: int, initializer: Callable[[], None] | None = None
) -> ThreadPoolExecutor:
    """Process-wide pools: their threads keep their per-thread Kuzu and SQLite connections,
    which a fresh thread per search would open anew (and the store would keep until close)."""
    with _pools_lock:
        pool = _pools.get(name)
        if pool is None:
            pool = _pools[name] = ThreadPoolExecutor(
                threads, thread_name_prefix=name, initializer=initializer
            )
        return pool


def _lower_priority(niceness: int = 10) -> None:
    """Bookkeeping yields the CPU to searches: on Linux a thread's nice value is its own."""
    try:
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, min(19, os.getpriority(os.PRIO_PROCESS, me) + niceness))
    except (AttributeError, OSError):  # not Linux, or not permitted: normal priority
        log.debug("access counts are written at normal priority")


def recall_pool() -> ThreadPoolExecutor:
    return _shared_pool("shiyi-recall", _POOL_THREADS)


def touch_later(store: MemoryStore, ids: Sequence[str], at: float) -> Future[None]:
    """Count an access to ``ids`` after the search has returned.

    One low-priority thread applies these in submission order.  Touching 10 events took
    8-20 ms at 100k events (a write statement per id and a commit) on a 40-60 ms query, and
    nothing on the query path reads event access counts back.  A store closed meanwhile loses
    the count.
    """

    def run() -> None:
        try:
            store.touch(ids, at=at)
        except StorageError as exc:
            log.debug("access count not recorded: %s", exc)

    return _shared_pool("shiyi-touch", 1, _lower_priority).submit(run)


@dataclass(slots=True)
class Found:
    """One recall path's ranked ids and what it already knows about them."""

    ranked: list[Scored]
    events: set[str] = field(default_factory=set)
    """Ids known to be events."""
    facts: set[str] = field(default_factory=set)
    """Ids known to be facts; an id in neither set may be either."""
    records: dict[str, EventRecord] = field(default_factory=dict)
    """Event records the path loaded anyway (the recency path)."""
    exhaustive: frozenset[NodeKind] = frozenset()
    """Node kinds of which the path scored every record it can (it was asked for more than
    it found): a record of such a kind that it missed, it could not score."""
    cut: set[str] = field(default_factory=set)
    """Ids the path scored but left out of ``ranked`` (below its limit): missed, not
    unscorable."""


@dataclass(slots=True)
class Records:
    """Event and fact records of recall candidates, loaded once per id."""

    events: dict[str, EventRecord] = field(default_factory=dict)
    facts: dict[str, FactRecord] = field(default_factory=dict)
    _asked_events: set[str] = field(default_factory=set)
    _asked_facts: set[str] = field(default_factory=set)
    _known_events: set[str] = field(default_factory=set)
    _known_facts: set[str] = field(default_factory=set)

    def load(
        self, store: MemoryStore, found: Iterable[Found], pool: ThreadPoolExecutor | None = None
    ) -> None:
        """Look up every id of ``found`` not asked for yet, as an event and/or a fact.

        With ``pool`` (only from a thread outside it), half of the event lookups and the fact
        query run in a pool thread: each is a separate Kuzu query, mostly spent outside the
        GIL.
        """
        paths = list(found)
        for path in paths:
            self._known_events |= path.events | path.records.keys()
            self._known_facts |= path.facts
            for event_id, record in path.records.items():
                self.events.setdefault(event_id, record)
                self._asked_events.add(event_id)
        want_events: list[str] = []
        want_facts: list[str] = []
        for key in dict.fromkeys(item.id for path in paths for item in path.ranked):
            if key not in self._known_facts and key not in self._asked_events:
                self._asked_events.add(key)
                want_events.append(key)
            if key not in self._known_events and key not in self._asked_facts:
                self._asked_facts.add(key)
                want_facts.append(key)
        half = len(want_events) // 2 if pool is not None else len(want_events)
        side: Future[tuple[list[EventRecord], list[FactRecord]]] | None = None
        if pool is not None and (want_facts or want_events[half:]):
            side = pool.submit(_fetch, store, want_events[half:], want_facts)
            events, facts = _fetch(store, want_events[:half], [])
        else:
            events, facts = _fetch(store, want_events, want_facts)
        if side is not None:
            more_events, facts = side.result()
            events += more_events
        self.events.update((e.id, e) for e in events)
        self.facts.update((f.id, f) for f in facts)

    def add_events(self, events: Iterable[EventRecord]) -> None:
        """Records read apart from the paths' (the turns beside the best hits)."""
        for event in events:
            self.events.setdefault(event.id, event)
            self._asked_events.add(event.id)

    def events_in(self, ids: Sequence[str]) -> list[EventRecord]:
        """The loaded events among ``ids``, in that order (as ``get_events`` returns them)."""
        return [self.events[i] for i in dict.fromkeys(ids) if i in self.events]

    def facts_in(self, ids: Sequence[str]) -> list[FactRecord]:
        return [self.facts[i] for i in dict.fromkeys(ids) if i in self.facts]


def _fetch(
    store: MemoryStore, event_ids: list[str], fact_ids: list[str]
) -> tuple[list[EventRecord], list[FactRecord]]:
    events = store.get_events(event_ids) if event_ids else []
    now = time.time()  # expired facts drop out here, whether or not the sweep ran yet
    return events, [as_read_at(f, now) for f in store.get_facts(fact_ids)] if fact_ids else []


def run_paths(
    store: MemoryStore,
    names: Sequence[str],
    path: Callable[[str], Found],
    *,
    lead: str = "vector",
) -> tuple[dict[str, Found], Records]:
    """Every path's results (in ``names`` order) and the records of all their ids.

    ``lead`` (the slow path) runs in the calling thread while each other path runs in a pool
    thread of its own; then the records of every path's ids are loaded at once.  At 100k
    turns of real conversation the keyword (10 ms) and graph (13 ms) paths one after another
    in one thread took longer than the vector path, and their own threads took hybrid p50
    from 37 to 33 ms (``bench/graph_scale_bench.py --hybrid``).
    """
    records = Records()
    others = [name for name in names if name != lead]
    if lead not in names or not others:
        found = {name: path(name) for name in names}
        records.load(store, found.values(), recall_pool())
        return found, records

    futures = {name: recall_pool().submit(path, name) for name in others}
    try:
        led = path(lead)
    except BaseException:
        wait(list(futures.values()))  # never leave pool threads using the store after we give up
        raise
    found = {**{n: f.result() for n, f in futures.items()}, lead: led}
    records.load(store, list(found.values()), recall_pool())
    return {name: found[name] for name in names}, records


def showable(records: Records, ids: list[str], viewer: Viewer, history: History) -> set[str]:
    """Which of ``ids`` ``viewer`` may be shown: their own turns (not echoes of earlier
    results) and the facts they may see, of the statuses ``history`` shows."""
    statuses = shown_statuses(history)
    # Echoes out before ranking: a query_memory result repeating five memories must not take
    # a path's ranks (and so its share of the fusion) from the memories themselves.
    events = {e.id for e in records.events_in(ids) if viewer.sees(e) and not e.derived}
    facts = {f.id for f in records.facts_in(ids) if f.status in statuses and viewer.sees_fact(f)}
    return events | facts
