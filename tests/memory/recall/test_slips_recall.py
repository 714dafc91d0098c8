"""A question's typing slips are read as the words the memory holds before every path
searches, so the embedding, the entities and the people of "resturant" and "Melaine" are
those of what was meant.  Both backends, the real embedding model."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from shiyi.memory.text.echoes import MEMORY_TOOL
from tests.support.conversations import one_chat, open_seeded, with_boosts

TURNS = [
    ("melanie", "We booked the Italian restaurant by the harbour for my birthday dinner."),
    ("caroline", "I painted a sunset over the lake last weekend."),
    ("melanie", "The kids loved the pottery class, they made little bowls."),
    ("caroline", "My grandmother gave me her old necklace from Sweden."),
]


def as_typed(memory: Memory) -> Retriever:
    return with_boosts(memory, slips=False)


def semantic(retriever: Retriever, question: str) -> list[tuple[str, float]]:
    hits = retriever.search(question, mode="semantic", limit=4, touch=False)
    return [(hit.id, round(hit.score, 6)) for hit in hits]


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("Which resturant did they book for the birthday?", "restaurant"),
        ("What did the kids make at the potery class?", "pottery"),
    ],
)
def test_the_embedding_is_of_the_word_meant(memory: Memory, typed: str, meant: str) -> None:
    slip = next(word for word in typed.split() if word.startswith(meant[:3]))
    written = typed.replace(slip, meant)
    assert semantic(memory.retriever, typed) == semantic(memory.retriever, written)
    assert semantic(as_typed(memory), typed) != semantic(as_typed(memory), written)


def test_a_misspelt_name_still_names_its_speaker(memory: Memory) -> None:
    found = memory.retriever.search("What did Melaine book?", limit=1, touch=False)
    assert found[0].id == "turn-0"
    assert memory.store.keyword_spelling("What did Melaine book?") == {"melaine": "melanie"}


def test_a_question_of_english_words_asks_the_store_nothing(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def spelling(query: str, unheld: Collection[str] = ()) -> dict[str, str]:
        asked.append(query)
        return {}

    monkeypatch.setattr(memory.retriever.store, "keyword_spelling", spelling)
    memory.retriever.search("What did Caroline paint last weekend?", touch=False)
    assert asked == []
    memory.retriever.search("What did Carolin paint?", touch=False)
    assert asked == ["What did Carolin paint?"]


def test_the_slips_the_store_reads(memory: Memory) -> None:
    read: Sequence[tuple[str, dict[str, str]]] = [
        ("the resturant by the harbour", {"resturant": "restaurant"}),
        ("a hiking trip", {}),  # English knows it
        ("what about the necklase", {"necklase": "necklace"}),
    ]
    for question, slips in read:
        assert memory.store.keyword_spelling(question) == slips


def test_the_reading_of_a_question_is_told(memory: Memory) -> None:
    assert memory.retriever.read_as("Which resturant did Melaine book?") == {
        "resturant": "restaurant",
        "melaine": "melanie",
    }
    assert memory.retriever.read_as("Which restaurant did Melanie book?") == {}
    assert as_typed(memory).read_as("Which resturant did they book?") == {}


OTHER = Viewer(user_id="mallory")


@pytest.fixture
def shared(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    """A store shared by two users: the default one's chat, and mallory's own turn."""
    mine = one_chat(TURNS)
    theirs = [
        replace(mine[0], id=f"mallory-{index}", user_id=OTHER.user_id, content=text)
        for index, text in enumerate(["Lunch at noon.", "My ring is silver.", "Bring a gift."])
    ]
    opened = open_seeded(tmp_path, memory_store, [*mine, *theirs])
    yield opened
    opened.close()


def test_a_slip_is_never_read_as_another_users_word(shared: Memory) -> None:
    # the necklace is the default user's: reading mallory's slip as it would change
    # mallory's embedding of the question, and so tell them the word is stored
    typed, written = "Where is the necklase from?", "Where is the necklace from?"
    assert shared.retriever.read_as(typed) == {"necklase": "necklace"}
    assert shared.retriever.read_as(typed, OTHER) == {}

    def semantic_as(viewer: Viewer, question: str) -> list[tuple[str, float]]:
        hits = shared.retriever.search(question, mode="semantic", viewer=viewer, touch=False)
        return [(hit.id, round(hit.score, 6)) for hit in hits]

    assert semantic_as(OTHER, typed) != semantic_as(OTHER, written)
    assert semantic_as(Viewer(), typed) == semantic_as(Viewer(), written)
    assert shared.retriever.read_as("When was lunhc?", OTHER) == {"lunhc": "lunch"}  # theirs
    assert shared.retriever.read_as("When was lunhc?") == {}


def test_a_word_beside_a_slip_that_only_another_user_writes_tells_nothing(
    tmp_path: Path, memory_store: str
) -> None:
    # mallory writes "zorb" (English does not know it; too short to be a slip itself); the
    # default user's slip beside it is read as any other, so the reading tells nothing of it
    mine = one_chat(TURNS)
    theirs = replace(mine[0], id="mallory-0", user_id=OTHER.user_id, content="Zorb again.")
    own = replace(mine[0], id="mine-zorb", ts=mine[-1].ts + 600, content="Zorb, I said.")
    with_theirs = open_seeded(tmp_path / "theirs", memory_store, [*mine, theirs])
    try:
        assert with_theirs.retriever.read_as("zorb necklase") == {"necklase": "necklace"}
        assert with_theirs.retriever.read_as("zorb necklase", OTHER) == {}  # no necklace
    finally:
        with_theirs.close()
    with_mine = open_seeded(tmp_path / "mine", memory_store, [*mine, own])
    try:  # the user's own word beside it: a phrase they write, not a slip
        assert with_mine.retriever.read_as("zorb necklase") == {}
    finally:
        with_mine.close()


@pytest.fixture
def echoed(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    """The chat, and the model's earlier query_memory call with a slip in it (an echo: stored
    and indexed, never shown)."""
    mine = one_chat(TURNS)
    call = replace(
        mine[-1],
        id="echo-0",
        ts=mine[-1].ts + 600,
        role="assistant",
        content="query_memory query=the necklase from Sweden",
        segment_type="tool_call",
        derived=MEMORY_TOOL,
    )
    theirs = replace(mine[0], id="mallory-0", user_id=OTHER.user_id, content="My braclet broke.")
    opened = open_seeded(tmp_path, memory_store, [*mine, call, theirs])
    yield opened
    opened.close()


def test_a_slip_only_unseen_memories_hold_is_still_read(echoed: Memory) -> None:
    # the model's own earlier call holds "necklase", and mallory's turn "braclet": words no
    # memory the default user is shown holds
    assert "echo-0" in [s.id for s in echoed.store.keyword_search("necklase", 5)]
    assert echoed.retriever.read_as("Where is the necklase from?") == {"necklase": "necklace"}
    assert "mallory-0" in [s.id for s in echoed.store.keyword_search("braclet", 5)]
    assert echoed.retriever.read_as("Who gave me the braclet?") == {}  # no bracelet of mine
    assert echoed.retriever.read_as("Who gave me the necklase?", OTHER) == {}  # not theirs
    assert echoed.retriever.read_as("Did my braclet break?", OTHER) == {}  # their own word
