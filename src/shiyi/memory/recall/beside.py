"""The turns beside recall's best hits, which join its candidates though no path found them.

A reply shares none of the question's words ("Any plans for the summer?" / "Researching
adoption agencies."), and neither does the piece of a burst that says the answer ("we went
camping at the lake" / "a bear walked right past our tent lol"): the boosts
(:mod:`shiyi.memory.recall.boosts`) give such a turn a share of its neighbour's score, but
only a candidate of some path gets one.  So the turns just before and after each of the
best :data:`BESIDE_TOP` hits, and the rest of the hit's burst, are read from the store and
join the candidates at the lowest fused score, where the shares can lift them.

Measured before building it: of the 519 evidence turns of LoCoMo dev's questions, 82 were no
candidate of any path; 13 of them sat next to a top-5 hit.  With each LoCoMo turn sent as its
sentences (``bench/pieces_bench.py``), 593 of 1,822 evidence messages were no candidate and in
the burst of a top-5 hit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from shiyi.memory.models import EventRecord
from shiyi.memory.recall.boosts import BURST_GAP, BURST_TYPES

BESIDE_TOP = 5
"""How many of the best hits bring their neighbours (the top of a short answer)."""
BESIDE_REACH = 4
"""How far a burst is followed from a hit, in turns either way."""


def turns_beside(top: Sequence[EventRecord], around: Iterable[EventRecord]) -> list[EventRecord]:
    """Of the turns ``around`` the ``top`` hits (their runs' turns near them), the ones that
    join: the hit's speaker's messages in a row with it (its burst, up to
    :data:`BESIDE_REACH` turns either way) and the message just before and just after that
    burst (for a hit alone, its two neighbours)."""
    turns: dict[tuple[str, int], EventRecord] = {}
    for event in around:
        if event.segment_type in BURST_TYPES:
            turns.setdefault((event.run_id, event.iteration), event)
    joined: dict[str, EventRecord] = {}
    for hit in top:
        for step in (-1, 1):
            last, at = hit, hit.iteration + step
            while abs(at - hit.iteration) <= BESIDE_REACH:
                turn = turns.get((hit.run_id, at))
                if turn is None:
                    break
                if turn.id != hit.id:
                    joined.setdefault(turn.id, turn)
                if not _same_burst(last, turn):
                    break
                last, at = turn, at + step
    return list(joined.values())


def _same_burst(one: EventRecord, other: EventRecord) -> bool:
    return (
        one.role == other.role
        and one.segment_type in BURST_TYPES
        and abs(other.ts - one.ts) <= BURST_GAP
    )
