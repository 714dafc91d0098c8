"""A short message's vector carries the end of the message before it in its run, or, when it
opens its run, the session's last message of the hour before; a long one, or one that
follows nothing, is its own text's embedding; forgetting a message embeds the one it led
into again.  Both backends, the real MiniLM embedder; phrasings written for this test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from shiyi.config import Settings
from shiyi.index.embeddings.cache import CachedEmbedder
from shiyi.memory.intake.event_vectors import LEAD_WORDS, lead_in_text
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from shiyi.memory.text.contextual import indexed_text
from tests.support.records import seed, turn
from tests.support.vectors import led_vector, own_vector, stored_as

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


def test_a_short_message_is_embedded_after_the_message_it_follows(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()
    seed(memory, [ASKED, ANSWER, STORY])
    assert stored_as(memory, ANSWER, led_vector(memory, ASKED, ANSWER))
    assert not stored_as(memory, ANSWER, own_vector(memory, ANSWER))
    assert stored_as(memory, ASKED, own_vector(memory, ASKED))  # it opens its run
    assert stored_as(memory, STORY, own_vector(memory, STORY))  # it stands on its own


def test_the_message_before_is_found_in_the_store_when_it_came_earlier(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()
    seed(memory, [ASKED])
    seed(memory, [ANSWER])
    assert stored_as(memory, ANSWER, led_vector(memory, ASKED, ANSWER))


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
    assert stored_as(memory, ANSWER, own_vector(memory, ANSWER))
    assert not memory.embedder.cache.get_many(memory.embedder.model_id, [lead])


# The live agent makes each request a run: the user's short answer to the assistant's
# question opens the next run.
PLANNING = turn(11, "Help me plan a birthday lunch for my grandmother", run="ask", iteration=0)
QUESTION = turn(
    12,
    "Happy to help! How old is she turning, and what does she like to eat?",
    run="ask",
    role="assistant",
    segment_type="response",
    iteration=0,
    segment=1,
)
REPLY = turn(13, "83. loves grilled fish", run="reply", iteration=0, ts=QUESTION.ts + 90)
NEXT_DAY = turn(14, "ok booked it", run="later", iteration=0, ts=REPLY.ts + 10 * 3600)


def test_a_reply_opening_its_run_leans_on_the_last_message_of_the_run_before(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()
    seed(memory, [PLANNING, QUESTION])
    seed(memory, [REPLY])
    seed(memory, [NEXT_DAY])
    assert stored_as(memory, REPLY, led_vector(memory, QUESTION, REPLY))
    assert stored_as(memory, NEXT_DAY, own_vector(memory, NEXT_DAY))  # hours later: a new request


def test_a_reply_leans_on_no_other_users_message_in_the_same_session(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()
    seed(memory, [PLANNING, QUESTION])
    stranger = replace(REPLY, id="stranger", user_id="mallory")
    seed(memory, [stranger])
    assert stored_as(memory, stranger, own_vector(memory, stranger))


def test_forgetting_the_last_message_of_a_run_embeds_the_next_runs_reply_again(
    open_memory: Callable[..., Memory],
) -> None:
    memory = open_memory()
    seed(memory, [PLANNING, QUESTION])
    seed(memory, [REPLY])
    memory.forget_ids([QUESTION.id])
    assert not stored_as(memory, REPLY, led_vector(memory, QUESTION, REPLY))
    assert stored_as(memory, REPLY, led_vector(memory, PLANNING, REPLY))  # what is left before it
