"""A value stated and later changed in a user's memory: the later statement ranks first when
the question's words cannot tell the two apart; a question about the past, and a chat between
two people, keep the scored order.  Both backends, the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import open_seeded, task_runs, top_ids

# A trip planned with an assistant over four sessions; the budget set in the second is
# raised in the fourth.
RUNS = {
    "planning": [
        ("user", "I want to plan a trip to Portugal in spring, can you help me plan it?"),
        ("assistant", "Happy to help you plan Portugal: spring is a lovely time to go."),
    ],
    "budget": [
        ("user", "For the Portugal trip we agreed on a budget of 2,000 euros."),
        ("assistant", "Noted: 2,000 euros for everything, flights included."),
    ],
    "dates": [
        ("user", "The trip dates are fixed: I fly to Lisbon on 3 April and back on 14 April."),
        ("assistant", "Great, eleven days then."),
    ],
    "new-budget": [
        ("user", "Change of plan: my budget for the Portugal trip is now 2,500 euros."),
        ("assistant", "Updated: 2,500 euros for the whole trip."),
    ],
}


@pytest.fixture
def assistant_memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    memory = open_seeded(tmp_path, memory_store, task_runs(RUNS, {}))
    yield memory
    memory.close()


@pytest.fixture
def chat_memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    memory = open_seeded(
        tmp_path, memory_store, task_runs(RUNS, {"user": "ana", "assistant": "ben"})
    )
    yield memory
    memory.close()


@pytest.mark.parametrize(
    "question",
    ["What's the budget for my Portugal trip?", "How much can I spend on the Portugal trip?"],
)
def test_the_later_statement_of_a_changed_value_ranks_first(
    assistant_memory: Memory, question: str
) -> None:
    assert top_ids(assistant_memory.retriever, question, k=2) == ["new-budget-0", "budget-0"]


def test_the_scores_alone_put_the_old_value_first(assistant_memory: Memory) -> None:
    # what the reordering works against: the older turn's words and vector match better
    hits = assistant_memory.retriever.search(
        "What's the budget for my Portugal trip?", limit=2, touch=False
    )
    assert hits[0].score < hits[1].score


def test_a_question_about_the_past_keeps_the_scored_order(assistant_memory: Memory) -> None:
    question = "What was the budget for my Portugal trip before?"
    hits = assistant_memory.retriever.search(question, limit=2, touch=False)
    assert [h.id for h in hits] == ["budget-0", "new-budget-0"]
    assert hits[0].score >= hits[1].score


def test_words_the_later_turn_lacks_keep_the_scored_order(assistant_memory: Memory) -> None:
    # "agreed" is said only of the first budget
    assert top_ids(assistant_memory.retriever, "What budget did we agree for Portugal?", k=2) == [
        "budget-0",
        "new-budget-0",
    ]


def test_a_chat_between_two_people_keeps_the_scored_order(chat_memory: Memory) -> None:
    base = chat_memory.retriever
    unspread = Retriever(
        base.store, base.embedder, base.weights, base.candidates,
        boosts=replace(base.boosts, spread=False),
    )  # fmt: skip
    question = "What's the budget for my Portugal trip?"
    assert top_ids(base, question, k=4) == top_ids(unspread, question, k=4)
    assert top_ids(base, question) == ["budget-0"]
