"""A burst's messages shown as one memory.

People write one thing in several messages ("we went to the lake" / "caught 3 trout!!" /
"so peaceful"), and the bursts boost (:data:`~shiyi.memory.recall.boosts.BURST_SHARE`)
lifts a burst's pieces together, so three of the best five hits could be one thing said,
pushing other turns out of the top (LoCoMo dev sent as sentences, ``bench/pieces_bench.py``:
evidence turns with a message in the top 5, 0.676 without bursts, 0.654 with).  Here the
best piece of each burst takes the burst's other pieces among the candidates into it: its
text holds them in the order they were sent, ``joined`` names them, and the burst takes one
place of the top k.  What the other places hold is then the next best thing said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shiyi.memory.models import EventRecord, MemoryHit
from shiyi.memory.recall.boosts import bursts_by_run
from shiyi.memory.text.contextual import speaker_name


def group_bursts(hits: Sequence[MemoryHit], events: Mapping[str, EventRecord]) -> list[MemoryHit]:
    """``hits`` (best first) with each burst's pieces folded into its best piece, which keeps
    its place and score.  ``events``: the hits' event records (a hit without one, and every
    fact, stays as it is).  Bursts are found among these events only, as the boost finds
    them (:func:`~shiyi.memory.recall.boosts.bursts_by_run`)."""
    burst_of = bursts_by_run([events[h.id] for h in hits if h.node == "event" and h.id in events])
    leaders: dict[str, MemoryHit] = {}  # first message of a burst -> the hit shown for it
    kept: list[MemoryHit] = []
    for hit in hits:
        burst = burst_of.get(hit.id) if hit.node == "event" else None
        if burst is None:
            kept.append(hit)
            continue
        leader = leaders.setdefault(burst[0].id, hit)
        if leader is hit:
            kept.append(hit)
        else:
            leader.joined.append(hit.id)
    for leader in leaders.values():
        if leader.joined:
            leader.text = _burst_text(burst_of[leader.id], {leader.id, *leader.joined})
    return kept


def _burst_text(burst: Sequence[EventRecord], shown: set[str]) -> str:
    pieces = [event for event in burst if event.id in shown]
    return f"{speaker_name(pieces[0].role)}: " + "\n".join(e.content for e in pieces)
