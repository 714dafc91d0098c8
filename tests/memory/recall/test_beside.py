"""The turns beside recall's best hits join its candidates: which ones (a unit), and on both
backends, that a reply no path found is shown, and never another user's turn."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.index.cache_stats import RESULT, counter
from shiyi.memory.kuzu.store import EmbeddedStore
from shiyi.memory.models import EventRecord
from shiyi.memory.recall.beside import BESIDE_REACH, turns_beside
from shiyi.memory.recall.boosts import BURST_GAP
from shiyi.memory.recall.config import Boosts
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import open_seeded
from tests.support.records import BASE_TS


def said(
    key: str, role: str, iteration: int, text: str = "", *, run: str = "r1", **kw: object
) -> EventRecord:
    fields: dict[str, object] = {"ts": BASE_TS + iteration * 30.0} | kw
    return EventRecord(
        id=key, session_id="chat", run_id=run, role=role, content=text or key,
        segment_type="imported", iteration=iteration, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_hits_neighbours_and_the_rest_of_its_burst_join() -> None:
    hit = said("hit", "sam", 3)
    around = [
        said("before", "lea", 2),  # just before: joins
        said("earlier", "lea", 1),  # two before, another speaker's: no
        said("piece", "sam", 4),  # the burst goes on
        said("piece2", "sam", 5),
        said("reply", "lea", 6),  # just after the burst: joins as its neighbour
        said("later", "sam", 7),  # after the reply: no
        said("other", "sam", 4, run="r2"),  # another run
    ]
    joined = {e.id for e in turns_beside([hit], around)}
    assert joined == {"before", "piece", "piece2", "reply"}


def test_a_burst_is_followed_only_so_far_and_stops_at_a_pause_or_a_tool_call() -> None:
    hit = said("hit", "sam", 0)
    long_burst = [said(f"p{i}", "sam", i) for i in range(1, 10)]
    joined = {e.id for e in turns_beside([hit], long_burst)}
    assert joined == {f"p{i}" for i in range(1, BESIDE_REACH + 1)}
    paused = [said("next", "sam", 1), said("after", "sam", 2, ts=BASE_TS + 30 + BURST_GAP + 1)]
    assert {e.id for e in turns_beside([hit], paused)} == {"next", "after"}  # its neighbour
    paused.append(said("then", "sam", 3, ts=BASE_TS + 30 + BURST_GAP + 31))
    assert "then" not in {e.id for e in turns_beside([hit], paused)}
    tool = [replace(said("call", "sam", 1), segment_type="tool_call"), said("more", "sam", 2)]
    assert turns_beside([hit], tool) == []


def test_the_store_reads_the_turns_around_spots_of_runs(memory_store: str, tmp_path: Path) -> None:
    events = [said(f"a{i}", "sam", i) for i in range(10)] + [said("b5", "sam", 5, run="r2")]
    memory = open_seeded(tmp_path, memory_store, events)
    try:
        found = memory.store.turns_around([("r1", 5), ("r1", 0), ("r1", 5)], 2)
        assert sorted(e.id for e in found) == ["a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"]
        assert memory.store.turns_around([], 2) == []
        assert memory.store.turns_around([("nowhere", 1)], 2) == []
    finally:
        memory.close()


def test_the_graph_reads_the_same_turns_as_the_mirror(tmp_path: Path) -> None:
    """An older store's mirror may be incomplete: then the graph answers, and alike."""
    events = [said(f"a{i}", "sam", i) for i in range(10)] + [said("b5", "sam", 5, run="r2")]
    memory = open_seeded(tmp_path, "embedded", events)
    try:
        store = memory.store.inner  # under the result cache's write counter
        assert isinstance(store, EmbeddedStore)
        spots = [("r1", 5), ("r2", 4)]
        mirrored = sorted(e.id for e in store.event_rows.around(spots, 1))
        assert sorted(e.id for e in store.graph.turns_around(spots, 1)) == mirrored
        assert mirrored == ["a4", "a5", "a6", "b5"]
    finally:
        memory.close()


FILLER = [
    "The train was late again this morning.",
    "I repainted the fence on Saturday.",
    "My sister is visiting in spring.",
    "Work has been hectic with the audit.",
    "I started reading a novel about sailors.",
    "The new bakery makes great croissants.",
]


@pytest.fixture
def chat(memory_store: str, tmp_path: Path) -> Iterator[Memory]:
    events = [
        said("theirs", "lea", 0, "Guess what, a new puppy!", user_id="mallory"),  # not ours
        said("asked", "lea", 1, "So what did you end up naming the new puppy?"),
        said("answer", "sam", 2, "Biscuit! It just suits him."),
    ]
    # later turns: the newest are the recent path's candidates
    events += [said(f"f{i}", "lea" if i % 2 else "sam", i + 3, t) for i, t in enumerate(FILLER)]
    memory = open_seeded(tmp_path, memory_store, events)
    yield memory
    memory.close()


def narrow(memory: Memory, **boosts: bool) -> Retriever:
    """Paths that return one candidate each: the reply is found by none."""
    base = memory.retriever
    return Retriever(base.store, base.embedder, base.weights, 1, boosts=replace(Boosts(), **boosts))


def test_a_reply_no_path_found_joins_beside_the_question(chat: Memory) -> None:
    question = "What did Sam name his new puppy?"
    hits = narrow(chat).search(question, limit=5, touch=False)
    found = [h.id for h in hits]
    assert "answer" in found[:3]
    assert hits[found.index("answer")].paths == {"beside": 1}  # how it got there, shown
    assert "theirs" not in found  # another user's turn beside a hit never joins
    alone = [h.id for h in narrow(chat, beside=False).search(question, limit=5, touch=False)]
    assert "answer" not in alone


def test_a_repeated_search_of_a_chat_is_answered_from_the_cache(
    chat: Memory, memory_store: str
) -> None:
    # Reading the turns beside the best hits is a read: were it counted as a write, every
    # hybrid search of a chat would empty the result cache.  (PostgreSQL has no result
    # cache: other processes write to it too.)
    question = "What did Sam name his new puppy?"
    before = counter(RESULT).hits
    first = chat.search(question, mode="hybrid", limit=3)
    second = chat.search(question, mode="hybrid", limit=3)
    assert counter(RESULT).hits == before + (1 if memory_store == "embedded" else 0)
    assert [hit.id for hit in second] == [hit.id for hit in first]
