"""On a store shared by two users, one user's many memories on the same words must not hide
the other's own: the keyword and vector paths search only the viewer's memories, and a path
still crowded by what is never shown (echoes of earlier results) is asked for more.  Both
backends, the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.recall.widen import WIDEST
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from shiyi.memory.text.echoes import MEMORY_TOOL
from tests.support.conversations import one_chat, open_seeded

MALLORY = Viewer(user_id="mallory")
CROWD = 100
"""The default user's turns about baking: more than a path's 40 candidates."""
THEIRS = [
    "This morning I baked a sourdough loaf with rye flour for the bakeclub, the kitchen smelled.",
    "My cat is called Pixel and she sleeps on the radiator.",
    "The train to work was late again because of the snow.",
    "The bakeclubs of the city meet on Fridays.",
]


@pytest.fixture(scope="module")
def crowd() -> list[tuple[str, str]]:
    said = "I baked sourdough bread with rye flour, loaf {}, bakeclub."
    return [("ana", said.format(n)) for n in range(CROWD)]


@pytest.fixture
def shared(tmp_path: Path, memory_store: str, crowd: list[tuple[str, str]]) -> Iterator[Memory]:
    """The default user's hundred loaves, and mallory's three turns (one of them a loaf)."""
    mine = one_chat(crowd)
    first = replace(mine[0], user_id=MALLORY.user_id, ts=mine[0].ts - 600)
    theirs = [replace(first, id=f"mallory-{i}", content=text) for i, text in enumerate(THEIRS)]
    opened = open_seeded(tmp_path, memory_store, [*mine, *theirs])
    yield opened
    opened.close()


def found(retriever: Retriever, question: str, viewer: Viewer, mode: str = "hybrid") -> list[str]:
    hits = retriever.search(question, mode=mode, viewer=viewer, limit=3, touch=False)  # type: ignore[arg-type]
    return [hit.id for hit in hits]


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_a_user_finds_their_own_memory_under_anothers_crowd(shared: Memory, mode: str) -> None:
    # every path's first 40 are the default user's loaves: mallory's own loaf ranks below
    first_forty = [s.id for s in shared.store.keyword_search("sourdough rye flour", 40)]
    assert "mallory-0" not in first_forty
    assert found(shared.retriever, "What bread did I bake with rye flour?", MALLORY, mode)[0] == (
        "mallory-0"
    )
    assert all(
        key.startswith("turn-") for key in found(shared.retriever, "sourdough rye", Viewer(), mode)
    )


class Asked:
    """The limits the store's keyword and vector searches were asked for (a real store)."""

    def __init__(self, memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
        self.limits: list[tuple[str, int]] = []
        store = memory.retriever.store
        for name in ("keyword_search", "vector_search"):
            monkeypatch.setattr(store, name, self._counted(name, getattr(store, name)))

    def _counted(self, name: str, search: Any) -> Any:
        def counted(*args: Any) -> Any:
            # keyword_search(query, limit, owners); vector_search(node, vector, limit, owners)
            self.limits.append((name, args[1] if name == "keyword_search" else args[2]))
            return search(*args)

        return counted


@pytest.mark.parametrize("mode", ["keyword", "semantic"])
def test_anothers_crowd_past_the_widest_leaves_ones_own_in_one_ask(
    shared: Memory, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    # a path asked for one candidate: the default user's hundred loaves are a hundred times
    # that, past any widening, yet mallory's own loaf is what her search finds, first ask
    narrow = Retriever(shared.store, shared.retriever.embedder, candidates=1)
    asked = Asked(shared, monkeypatch)
    assert found(narrow, "sourdough rye flour", MALLORY, mode)[:1] == ["mallory-0"]
    assert {limit for _, limit in asked.limits} == {1}
    assert "mallory-0" not in [s.id for s in shared.store.keyword_search("sourdough rye", 40)]


def test_a_path_is_asked_once_when_its_candidates_are_the_viewers(
    shared: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = Asked(shared, monkeypatch)
    found(shared.retriever, "sourdough rye flour", Viewer())
    # the vector path asks for events and for facts
    assert sorted(asked.limits) == [("keyword_search", 40), *[("vector_search", 40)] * 2]


@pytest.fixture
def echoed(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    """Mallory's loaf, then a hundred echoes of her searches about it (the model's
    query_memory results quoting it: stored and indexed, never shown)."""
    first = replace(one_chat([("ana", THEIRS[0])])[0], id="mallory-0", user_id=MALLORY.user_id)
    echo = "query_memory result: sourdough rye flour loaf {}"
    echoes = [
        replace(
            first,
            id=f"echo-{n}",
            ts=first.ts + 60 * (n + 1),
            role="tool",
            content=echo.format(n),
            segment_type="tool_result",
            derived=MEMORY_TOOL,
        )
        for n in range(CROWD)
    ]
    opened = open_seeded(tmp_path, memory_store, [first, *echoes])
    yield opened
    opened.close()


@pytest.mark.parametrize(("candidates", "finds"), [(1, []), (10, ["mallory-0"])])
def test_a_path_crowded_by_echoes_is_asked_for_more_up_to_its_widest(
    echoed: Memory, monkeypatch: pytest.MonkeyPatch, candidates: int, finds: list[str]
) -> None:
    narrow = Retriever(echoed.store, echoed.retriever.embedder, candidates=candidates)
    asked = Asked(echoed, monkeypatch)
    # 1, 4, 16 ids: all echoes of her searches; 10, 40, 160: her loaf too
    assert found(narrow, "sourdough rye flour loaf", MALLORY, "keyword")[:1] == finds
    assert [limit for _, limit in asked.limits] == [candidates * 4**n for n in range(3)]
    assert candidates * 4**2 == candidates * WIDEST


def test_a_word_of_ones_own_under_anothers_crowd_is_no_slip(shared: Memory) -> None:
    # "bakeclub" is in a hundred of the default user's turns and one of mallory's: not a slip
    # of "bakeclubs" (another turn of hers), though her turn is not among its first 40 hits
    assert "mallory-0" not in [s.id for s in shared.store.keyword_search("bakeclub", 40)]
    assert shared.retriever.read_as("When did I bake for the bakeclub?", MALLORY) == {}
