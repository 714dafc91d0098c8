"""A short message's vector carries the end of the message before it in its run; a long one,
or one that opens its run, is its own text's embedding; forgetting a message embeds the one
it led into again.  Both backends, the real MiniLM embedder; phrasings written for this test."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import pytest

from shiyi.config import Settings
from shiyi.index.embeddings.cache import CachedEmbedder
from shiyi.memory.intake.event_vectors import LEAD_WORDS, lead_in_text
from shiyi.memory.models import EventRecord
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from shiyi.memory.text.contextual import indexed_text
from tests.support.records import seed, turn

ASKED = turn(1, "We visited my grandmother at the care home on Sunday. Guess how old she is?")
ANSWER = turn(2, "83, and still sharp as a tack", role="assistant")
STORY = turn(
    3,
    "Then we walked along the river to the old mill, had lunch at the pub by the bridge, and "
    "my brother told the whole story of his disastrous camping trip in the Highlands last "
    "August, the one where the tent blew away in the middle of the night",
)
OTHERS = [
    turn(4, "I need new running shoes before the half marathon", run="r2"),
    turn(5, "Try the ones with the wide toe box", run="r2", role="assistant"),
    turn(6, "My manager moved the team meeting to Thursday", run="r3"),
    turn(7, "Thursday suits me better anyway", run="r3", role="assistant"),
    turn(8, "My nephew turns 12 next week, any gift ideas?", run="r4"),
    turn(9, "Our old dog sleeps most of the day now", run="r5"),
    turn(10, "The cathedral is nearly 900 years old", run="r6"),
]


@pytest.fixture
def open_memory(backend_settings: Settings) -> Iterator[Callable[..., Memory]]:
    opened: list[Memory] = []

    def factory(*, lead_in: bool = True) -> Memory:
        backend_settings.memory.lead_in = lead_in
        memory = Memory.open(backend_settings, start_worker=False)
        opened.append(memory)
        return memory

    yield factory
    for memory in opened:
        memory.close()


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def _stored_as(memory: Memory, event: EventRecord, expected: Sequence[float]) -> bool:
    """Whether ``event``'s stored vector is ``expected``: it scores 1 against it."""
    found = memory.store.vector_search("event", list(expected), 3)
    return any(s.id == event.id and s.score > 0.999 for s in found)


def _own(memory: Memory, event: EventRecord) -> list[float]:
    assert memory.embedder is not None
    return memory.embedder.embed([indexed_text(event)])[0]


def _led(memory: Memory, before: EventRecord, event: EventRecord) -> list[float]:
    assert memory.embedder is not None
    own, lead = memory.embedder.embed([indexed_text(event), lead_in_text(before, event)])
    return _unit([a + b for a, b in zip(own, lead, strict=True)])


def test_a_short_message_is_embedded_after_the_message_it_follows(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()
    seed(memory, [ASKED, ANSWER, STORY])
    assert _stored_as(memory, ANSWER, _led(memory, ASKED, ANSWER))
    assert not _stored_as(memory, ANSWER, _own(memory, ANSWER))
    assert _stored_as(memory, ASKED, _own(memory, ASKED))  # it opens its run
    assert _stored_as(memory, STORY, _own(memory, STORY))  # it stands on its own


def test_the_message_before_is_found_in_the_store_when_it_came_earlier(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()
    seed(memory, [ASKED])
    seed(memory, [ANSWER])
    assert _stored_as(memory, ANSWER, _led(memory, ASKED, ANSWER))


def test_a_long_message_before_leads_in_with_its_end_only() -> None:
    before = turn(1, " ".join(f"w{i}" for i in range(100)))
    text = lead_in_text(before, ANSWER)
    assert "w99" in text and "w50" not in text and text.startswith("… ")
    assert text.endswith(indexed_text(ANSWER))
    assert len(text.split("\n")[0].split()) == LEAD_WORDS + 1  # the mark and the words


def test_a_reply_is_found_by_what_the_message_before_it_asked(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()

    def rank(user: str) -> int:
        """Where the reply ranks in ``user``'s own copy of the chat."""
        mine = [replace(e, id=f"{user}-{e.id}", user_id=user) for e in (ASKED, ANSWER, STORY)]
        mine += [replace(e, id=f"{user}-{e.id}", user_id=user) for e in OTHERS]
        seed(memory, mine)
        assert memory.embedder is not None
        [asked] = memory.embedder.embed(["What age is Gran?"])
        nearest = memory.store.vector_search("event", asked, 10, Viewer(user_id=user).owners())
        return [s.id for s in nearest].index(f"{user}-{ANSWER.id}")

    led = rank("led")
    memory.worker.lead_in = False
    assert led < rank("alone")


def test_forgetting_a_message_embeds_the_one_it_led_into_again(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()
    seed(memory, [ASKED, ANSWER, STORY])
    lead = lead_in_text(ASKED, ANSWER)
    assert isinstance(memory.embedder, CachedEmbedder)
    assert memory.embedder.cache.get_many(memory.embedder.model_id, [lead])
    memory.forget_ids([ASKED.id])
    assert _stored_as(memory, ANSWER, _own(memory, ANSWER))
    assert not memory.embedder.cache.get_many(memory.embedder.model_id, [lead])
