"""One conversation does not fill the top of a user–assistant memory: hybrid recall spreads
its hits over runs there, and leaves a chat between two people as scored.  Both backends,
the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.index.cache_stats import RESULT, counter
from shiyi.memory.recall.feedback import FEEDBACK_RUNS, moved_query
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import open_seeded, task_runs

# A trip planned with an assistant over three sessions: the first talks about the trip at
# length, the later ones settle one thing each.
RUNS = {
    "planning": [
        ("user", "I want to plan a trip to Portugal in spring, can you help me plan it?"),
        ("assistant", "Happy to help you plan Portugal: spring is a lovely time to go."),
        ("user", "I like old towns, food markets and walks along the coast."),
        ("assistant", "Then start in Lisbon and take the train up to Porto."),
        ("user", "Let's continue another day, I need to check my holidays first."),
    ],
    "budget": [
        ("user", "For the Portugal trip we agreed on a budget of 2,000 euros."),
        ("assistant", "Noted: 2,000 euros for everything, flights included."),
    ],
    "dates": [
        ("user", "The trip dates are fixed: I fly to Lisbon on 3 April and back on 14 April."),
        ("assistant", "Great, eleven days then."),
    ],
}
QUESTION = "What have we planned for my Portugal trip so far?"
CHAT_ROLES = {"user": "ana", "assistant": "ben"}
"""The same turns as a chat between two people."""


@pytest.fixture
def assistant_memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    memory = open_seeded(tmp_path, memory_store, task_runs(RUNS, {}))
    yield memory
    memory.close()


@pytest.fixture
def chat_memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    memory = open_seeded(tmp_path, memory_store, task_runs(RUNS, CHAT_ROLES))
    yield memory
    memory.close()


def runs_in_top(retriever: Retriever, k: int) -> list[str]:
    hits = retriever.search(QUESTION, limit=k, touch=False)
    return [hit.id.rsplit("-", 1)[0] for hit in hits]


def unspread(memory: Memory) -> Retriever:
    base = memory.retriever
    boosts = replace(base.boosts, spread=False)
    return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=boosts)


def test_a_users_question_about_work_over_several_sessions_reaches_each_of_them(
    assistant_memory: Memory,
) -> None:
    assert runs_in_top(unspread(assistant_memory), k=2) == ["planning"] * 2
    assert set(runs_in_top(unspread(assistant_memory), k=4)) == {"planning", "budget"}
    assert runs_in_top(assistant_memory.retriever, k=2) == ["planning", "budget"]
    assert runs_in_top(assistant_memory.retriever, k=3) == ["planning", "budget", "dates"]


def test_a_chat_between_two_people_keeps_its_order(chat_memory: Memory) -> None:
    assert runs_in_top(chat_memory.retriever, k=5) == runs_in_top(unspread(chat_memory), k=5)
    assert runs_in_top(chat_memory.retriever, k=2) == ["planning"] * 2


def scores(retriever: Retriever) -> dict[str, float]:
    return {hit.id: hit.score for hit in retriever.search(QUESTION, limit=9, touch=False)}


def without(memory: Memory, boost: str) -> Retriever:
    base = memory.retriever
    boosts = replace(base.boosts, **{boost: False})
    return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=boosts)


def test_a_task_does_not_share_its_best_score_with_its_turns(assistant_memory: Memory) -> None:
    # In a user's memory a run is one task and only its best turn enters the top before the
    # other runs': lifting all its turns by its best score is not done...
    assert scores(assistant_memory.retriever) == scores(without(assistant_memory, "episodes"))


def test_a_task_holding_more_of_the_question_still_ranks_higher(assistant_memory: Memory) -> None:
    # ...but the words of the question a run holds between its turns still rank the runs.
    assert scores(assistant_memory.retriever) != scores(without(assistant_memory, "coverage"))


@pytest.mark.parametrize("boost", ["episodes", "coverage"])
def test_a_days_chat_lifts_its_every_turn(chat_memory: Memory, boost: str) -> None:
    # ...between people it is.
    assert scores(chat_memory.retriever) != scores(without(chat_memory, boost))


def run_ratio(found: dict[str, float], lifted: str, other: str) -> float:
    best = {run: max(s for key, s in found.items() if key.startswith(run)) for run in RUNS}
    return best[lifted] / best[other]


def assert_the_nearer_run_gains(memory: Memory, similarity: dict[str, float], boost: str) -> None:
    """Of the runs ``similarity`` puts nearest and farthest, the nearer gains on the other
    with ``boost`` on: fused scores are exp(z), so by exp(weight * their z-score distance),
    whatever else moved."""
    ordered = sorted(similarity, key=similarity.__getitem__)
    nearest, farthest = ordered[-1], ordered[0]
    assert similarity[nearest] > similarity[farthest]
    on, off = scores(memory.retriever), scores(without(memory, boost))
    assert run_ratio(on, nearest, farthest) > run_ratio(off, nearest, farthest) * 1.05


def test_a_task_nearer_the_question_as_a_whole_ranks_higher(assistant_memory: Memory) -> None:
    store = assistant_memory.retriever.store
    assert assistant_memory.embedder is not None
    vector = assistant_memory.embedder.embed([QUESTION])[0]
    similarity = store.run_similarity(list(RUNS), vector)
    assert set(similarity) == set(RUNS)
    assert_the_nearer_run_gains(assistant_memory, similarity, "run_similarity")


def test_a_days_chat_is_not_ranked_by_its_mean(chat_memory: Memory) -> None:
    # A day between people is about many things: its mean vector says little.
    assert scores(chat_memory.retriever) == scores(without(chat_memory, "run_similarity"))
    assert scores(chat_memory.retriever) == scores(without(chat_memory, "feedback"))


def test_a_task_nearer_what_the_best_tasks_are_about_ranks_higher(
    assistant_memory: Memory,
) -> None:
    store = assistant_memory.retriever.store
    assert assistant_memory.embedder is not None
    assert len(RUNS) <= FEEDBACK_RUNS  # so the best runs are all of them
    centroid = store.run_centroid(list(RUNS))
    vector = assistant_memory.embedder.embed([QUESTION])[0]
    assert len(centroid) == len(vector)
    moved = store.run_similarity(list(RUNS), moved_query(vector, centroid))
    assert_the_nearer_run_gains(assistant_memory, moved, "feedback")


def test_a_repeated_search_of_a_users_memory_is_answered_from_the_cache(
    assistant_memory: Memory, memory_store: str
) -> None:
    # Run similarity and feedback read the store: were either counted as a write, every
    # hybrid search of a user's memory would empty the result cache.  (PostgreSQL has no
    # result cache: other processes write to it too.)
    before = counter(RESULT).hits
    first = assistant_memory.search(QUESTION, mode="hybrid", limit=3)
    second = assistant_memory.search(QUESTION, mode="hybrid", limit=3)
    assert counter(RESULT).hits == before + (1 if memory_store == "embedded" else 0)
    assert [hit.id for hit in second] == [hit.id for hit in first]
