"""Bringing a stored memory up to what this version reads from text (``shiyi memory relink``).

A store written by an older version keeps what that version read: the names and topics its
turns were linked to (topics joined the graph on 2026-11-24) and the terms its keyword index
holds (British spellings, family words and irregular plurals stemmed as one, hyphenated
words joined, 2026-12-04).  :func:`relink` reads every stored turn and fact again.  It is
idempotent (links are merged, keyword entries replaced by id), so an interrupted run is
simply started again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.text.contextual import indexed_texts

CHUNK = 1000
"""Turns (and facts) read, linked and indexed at a time: what the worker links at once (16
jobs of 64), large enough for the graph's bulk edge insert."""


def relink(
    store: MemoryStore,
    link_events: Callable[[Sequence[str]], object],
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Link every stored turn to its names and topics again (``link_events``: the worker's)
    and index every turn's and fact's words again; returns how many turns.
    ``progress(done, total)`` after each chunk of turns."""
    events = store.recent_events(10**9)[::-1]
    for start in range(0, len(events), CHUNK):
        chunk = events[start : start + CHUNK]
        link_events([event.id for event in chunk])
        _index_events(store, chunk)
        if progress is not None:
            progress(min(start + CHUNK, len(events)), len(events))
    fact_ids = store.fact_ids(10**9)
    for start in range(0, len(fact_ids), CHUNK):
        facts = store.get_facts(fact_ids[start : start + CHUNK])
        store.index_keywords([(fact.id, "fact", fact.text) for fact in facts])
    return len(events)


def _index_events(store: MemoryStore, events: Sequence[EventRecord]) -> None:
    texts = indexed_texts(events)
    store.index_keywords([(e.id, "event", text) for e, text in zip(events, texts, strict=True)])
