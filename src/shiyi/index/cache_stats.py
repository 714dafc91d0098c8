"""Hit and miss counters of the process's caches, for ``shiyi memory health`` and the page.

Each cache counts into one named :class:`CacheCounter` of this process (a registry, not an
argument threaded through every layer: the embedding cache sits three layers below the
memory's health report).  Counts start at zero with the process; rates are hits over lookups.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

RESULT = "retrieval results"
EMBEDDING = "embeddings"
SUMMARY = "summaries"
PROMPT = "system prompt"
NAMES = (RESULT, EMBEDDING, SUMMARY, PROMPT)


@dataclass(slots=True)
class CacheCounter:
    name: str
    hits: int = 0
    misses: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, hits: int = 0, misses: int = 0) -> None:
        with self._lock:  # += on an attribute is not atomic across threads
            self.hits += hits
            self.misses += misses

    @property
    def lookups(self) -> int:
        return self.hits + self.misses

    @property
    def rate(self) -> float | None:
        """Hits over lookups; None before the first lookup (no rate, rather than 0 %)."""
        return self.hits / self.lookups if self.lookups else None


_COUNTERS = {name: CacheCounter(name) for name in NAMES}


def counter(name: str) -> CacheCounter:
    return _COUNTERS[name]


@dataclass(slots=True, frozen=True)
class CacheRate:
    """One cache's counts at one moment (what health reports show)."""

    name: str
    hits: int
    misses: int
    rate: float | None


def snapshot() -> list[CacheRate]:
    """Every counter now, in :data:`NAMES` order."""
    return [CacheRate(c.name, c.hits, c.misses, c.rate) for c in _COUNTERS.values()]


def rate_text(rate: CacheRate) -> str:
    """``12 hits, 3 misses (80.0 %)``; ``no lookups yet`` before the first."""
    if rate.rate is None:
        return "no lookups yet"
    return f"{rate.hits} hits, {rate.misses} misses ({100 * rate.rate:.1f} %)"


def reset() -> None:
    """Start every count again from zero (a bench's 'before' and 'after' runs)."""
    for item in _COUNTERS.values():
        with item._lock:
            item.hits = item.misses = 0
