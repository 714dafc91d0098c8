"""A user asking about what the assistant suggested finds the session where it did, above a
later one where the user only mentioned it (:mod:`shiyi.memory.recall.addressed`).  Both
backends, the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import open_seeded, task_runs

RUNS = {
    "suggested": [
        ("user", "Any stretches for my lower back?"),
        ("assistant", "Try cat-cow stretches and knee hugs for your lower back each evening."),
    ],
    "skipped": [
        ("user", "I did not do the stretches for my lower back this week."),
        ("assistant", "No worries, start again tomorrow."),
    ],
    "told": [
        ("user", "My back pain started after I moved house in March."),
        ("assistant", "Noted: the back pain started after your move in March."),
    ],
}


@pytest.fixture
def memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    opened = open_seeded(tmp_path, memory_store, task_runs(RUNS, {}))
    yield opened
    opened.close()


def first_run(retriever: Retriever, question: str) -> str:
    best = retriever.search(question, limit=3, touch=False)[0]
    return best.id.rsplit("-", 1)[0]


def unaddressed(memory: Memory) -> Retriever:
    base = memory.retriever
    boosts = replace(base.boosts, said_by=False)
    return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=boosts)


def test_what_you_suggested_is_found_above_a_later_mention_of_it(memory: Memory) -> None:
    question = "Which stretches did you suggest for my lower back?"
    assert first_run(memory.retriever, question) == "suggested"
    # read without whose words it asks about, the newer turn holding the same words wins
    assert first_run(unaddressed(memory), question) == "skipped"


def test_what_i_told_you_is_found_in_the_session_i_told_it(memory: Memory) -> None:
    question = "What did I tell you about when my back pain started?"
    assert first_run(memory.retriever, question) == "told"
