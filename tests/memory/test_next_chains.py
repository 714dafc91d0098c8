"""The NEXT chain follows each session's order on both backends, whatever the ids' length
and however the writes come (several sessions per write, sessions going on, deletes)."""

from __future__ import annotations

import random
from itertools import pairwise

from shiyi.memory.protocol import MemoryStore
from tests.memory.conftest import next_pairs
from tests.support.records import turn


def test_every_session_gets_its_whole_next_chain(store: MemoryStore) -> None:
    # Chat sessions are named ses_ + 12 hex: on Kuzu, ids over 12 bytes once made a session
    # read back another session's events inside the write (see test_graph.py's pin).
    rng = random.Random(7)
    chains: dict[str, list[str]] = {}
    for _ in range(30):
        batch = []
        for _ in range(rng.randint(1, 3)):  # one write may open several sessions
            session = "ses_" + "".join(rng.choices("0123456789abcdef", k=rng.randint(4, 20)))
            events = [turn(i, id=f"{session}-{i}", session=session) for i in range(3)]
            chains[session] = [e.id for e in events]
            batch += events
        store.add_events(batch)
        older = rng.choice(list(chains))  # an older session goes on
        start = len(chains[older])
        more = [turn(start + i, id=f"{older}-{start + i}", session=older) for i in range(2)]
        store.add_events(more)
        chains[older] += [e.id for e in more]
    for session in rng.sample(list(chains), 8):  # and loses a turn in the middle
        store.delete([chains[session].pop(1)])

    wanted = {(a, b) for ids in chains.values() for a, b in pairwise(ids)}
    assert next_pairs(store) == wanted
