"""The retrieval-result cache: the same search by the same viewer within five minutes is
answered from memory, unless anything was written since (seed 001 section 4.3).

Correctness before hits: every entry remembers the store's *write generation* when its
search began, and :class:`WriteCountingStore` bumps the generation after every store call
that writes (events, facts, embeddings, entities, deletes, compaction).  An entry of an
older generation is never served, so a forget can never leave a cached hit showing the
forgotten text, and a new fact is found by the next identical query.  Keys hold the viewer,
so one user's results are never another's.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from shiyi.index.cache_stats import RESULT, counter
from shiyi.memory.models import History, MemoryHit
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.scopes import Viewer

TTL_SECONDS = 300.0
CAPACITY = 512

READS = frozenset({
    "get_meta", "vector_search", "run_similarity", "run_centroid", "keyword_search",
    "keyword_spelling",
    "neighbourhood", "recent_events", "get_events", "event_owners", "get_facts", "fact_ids",
    "find_entities", "expand", "turns_around",
    "events_missing_embeddings", "slot_candidates", "mentioned_entities", "superseded_by",
    "session_window", "facts_derived_from", "fact_groups", "open_conflicts",
    "facts_by_status", "entity_footprint", "user_footprint", "counts", "visible_counts",
    "close",
    "touch",
})  # fmt: skip
"""Store calls that leave the answer to a search unchanged.  ``touch`` writes access times,
which only the search itself causes; every call not named here counts as a write."""


@dataclass(frozen=True, slots=True)
class SearchKey:
    viewer: Viewer
    query: str
    mode: str
    kinds: tuple[str, ...] | None
    limit: int
    history: History | None

    @classmethod
    def of(
        cls,
        viewer: Viewer,
        query: str,
        mode: str,
        kinds: Sequence[str] | None,
        limit: int,
        history: History | None,
    ) -> SearchKey:
        normal = " ".join(query.split()).casefold()  # "Tea  " and "tea" are one question
        chosen = tuple(sorted(set(kinds))) if kinds is not None else None
        return cls(viewer, normal, mode, chosen, limit, history)


class ResultCache:
    """A bounded LRU of search results with a time to live and a write generation."""

    def __init__(
        self,
        *,
        ttl: float = TTL_SECONDS,
        capacity: int = CAPACITY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.capacity = capacity
        self.clock = clock
        self.generation = 0
        self._entries: OrderedDict[SearchKey, tuple[int, float, list[MemoryHit]]] = OrderedDict()
        self._lock = threading.Lock()

    def bump(self) -> None:
        """Something was written: every entry made before is stale."""
        with self._lock:
            self.generation += 1
            self._entries.clear()

    def get(self, key: SearchKey) -> list[MemoryHit] | None:
        """A copy of the cached hits (callers adjust theirs), or None, counting either."""
        with self._lock:
            entry = self._entries.get(key)
            fresh = (
                entry is not None
                and entry[0] == self.generation
                and self.clock() - entry[1] < self.ttl
            )
            if entry is not None and not fresh:
                del self._entries[key]
            if fresh:
                self._entries.move_to_end(key)
        counter(RESULT).count(hits=int(fresh), misses=int(not fresh))
        return copy.deepcopy(entry[2]) if fresh and entry is not None else None

    def put(self, key: SearchKey, generation: int, hits: Sequence[MemoryHit]) -> None:
        """Keep ``hits`` of a search that began at ``generation`` (dropped if a write came
        in between: the search may have read the store half-way through it)."""
        with self._lock:
            if generation != self.generation:
                return
            self._entries[key] = (generation, self.clock(), copy.deepcopy(list(hits)))
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def update(self, key: SearchKey, generation: int, hits: Sequence[MemoryHit]) -> None:
        """Replace an entry's hits (their access counts grew), keeping its age; nothing if
        a write came in between."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == generation == self.generation:
                self._entries[key] = (generation, entry[1], copy.deepcopy(list(hits)))

    def __len__(self) -> int:
        return len(self._entries)


class WriteCountingStore:
    """``store`` with every writing call followed by ``on_write`` (even when it fails:
    part of it may have been written)."""

    def __init__(self, store: MemoryStore, on_write: Callable[[], None]) -> None:
        self.inner = store
        self._on_write = on_write

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if name in READS or name.startswith("__") or not callable(attribute):
            return attribute

        def write(*args: Any, **kwargs: Any) -> Any:
            try:
                return attribute(*args, **kwargs)
            finally:
                self._on_write()

        return write


def counting(store: MemoryStore, cache: ResultCache) -> MemoryStore:
    """``store`` as the memory's parts see it: writes through it invalidate ``cache``."""
    if isinstance(store, WriteCountingStore):
        return cast(MemoryStore, store)
    return cast(MemoryStore, WriteCountingStore(store, cache.bump))
