"""A cache for pure functions of one short text.

Writing a fact compares its value with every live fact of its slot (a user's statements of
no slot can be thousands), and each comparison reads both texts (their numbers, frame,
stated slot).  Stored values repeat from write to write, so these readings are cached:
remember with 1,000 earlier statements took 544 ms at the median uncached, 89 ms cached
(2026-12-07).  Only short texts are kept, so that a model storing huge values cannot make
the cache hold them: at most ``MAX_ENTRIES`` texts of ``MAX_CHARS`` per function.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar

MAX_CHARS = 1000
MAX_ENTRIES = 2048

T = TypeVar("T")


def short_text_cache(read: Callable[[str], T]) -> Callable[[str], T]:
    """``read``, its results for texts of at most :data:`MAX_CHARS` cached (callers must not
    change a cached result)."""
    cached = lru_cache(maxsize=MAX_ENTRIES)(read)

    @wraps(read)
    def call(text: str) -> T:
        return cached(text) if len(text) <= MAX_CHARS else read(text)

    return call
