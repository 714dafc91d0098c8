"""What a stored turn's vector is: its own text's embedding, or that and its lead-in's
(:mod:`shiyi.memory.intake.event_vectors`), read back from the store."""

from __future__ import annotations

import math
from collections.abc import Sequence

from shiyi.memory.intake.event_vectors import lead_in_text
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory
from shiyi.memory.text.contextual import indexed_text


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def stored_as(memory: Memory, event: EventRecord, expected: Sequence[float]) -> bool:
    """Whether ``event``'s stored vector is ``expected``: it scores 1 against it."""
    found = memory.store.vector_search("event", list(expected), 3)
    return any(s.id == event.id and s.score > 0.999 for s in found)


def own_vector(memory: Memory, event: EventRecord) -> list[float]:
    assert memory.embedder is not None
    return memory.embedder.embed([indexed_text(event)])[0]


def led_vector(memory: Memory, before: EventRecord, event: EventRecord) -> list[float]:
    assert memory.embedder is not None
    own, lead = memory.embedder.embed([indexed_text(event), lead_in_text(before, event)])
    return _unit([a + b for a, b in zip(own, lead, strict=True)])
