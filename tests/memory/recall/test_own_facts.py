"""Asked about themself, the user's own facts of an attribute come before a relative's or a
friend's; asked about the relative, theirs come first as before.  Both backends, the real
embedding model; phrasings written for this test from everyday English and Chinese."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.memory.recall.own_facts import asks_about_me
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import open_seeded

MINE = "I moved to Munich"
SISTER = "My sister lives in Porto"
TOM = "My brother Tom lives in Leeds"
STATED = [SISTER, TOM, MINE, "My favourite colour is green", "My sister's job is nursing"]


@pytest.fixture
def memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    opened = open_seeded(tmp_path, memory_store, [])
    for text in STATED:
        opened.remember(text)
    assert opened.worker.drain(timeout=120)  # the facts' vectors
    yield opened
    opened.close()


def top(memory: Memory, question: str) -> str:
    return memory.retriever.search(question, limit=3, touch=False)[0].text


@pytest.mark.parametrize(
    "question", ["Where do I live?", "where do I live now", "Which city am I living in?"]
)
def test_asked_about_themself_the_users_own_city_comes_first(memory: Memory, question: str) -> None:
    assert top(memory, question).endswith(MINE)
    scores = [h.score for h in memory.retriever.search(question, limit=5, touch=False)]
    assert scores == sorted(scores, reverse=True)  # moved facts take their places' scores


@pytest.mark.parametrize(
    ("question", "answer"),
    [("Where does my sister live?", SISTER), ("Where does Tom live?", TOM)],
)
def test_asked_about_someone_else_their_fact_comes_first(
    memory: Memory, question: str, answer: str
) -> None:
    assert top(memory, question).endswith(answer)


def test_without_the_rule_the_sisters_city_came_first(memory: Memory) -> None:
    plain = Retriever(
        memory.store,
        memory.embedder,
        memory.retriever.weights,
        boosts=replace(memory.retriever.boosts, own_facts=False),
    )
    assert plain.search("Where do I live?", limit=1, touch=False)[0].text.endswith(SISTER)


ABOUT_ME = ["Where do I live?", "what's my job", "I'm trying to remember my address", "我住在哪里"]
NOT_ABOUT_ME = [
    "Where does my sister live?",
    "What did I tell you about Ana?",
    "where does my best friend work",
    "我妹妹住在哪里",
    "我们住在哪里",
    "Where does she live?",
]


@pytest.mark.parametrize("query", ABOUT_ME)
def test_a_first_person_question_naming_no_one_else_is_about_the_user(query: str) -> None:
    from shiyi.memory.recall.query_signals import understand

    assert asks_about_me(query, understand(query, lambda: 0.0).people)


@pytest.mark.parametrize("query", NOT_ABOUT_ME)
def test_a_question_naming_someone_else_is_not(query: str) -> None:
    from shiyi.memory.recall.query_signals import understand

    assert not asks_about_me(query, understand(query, lambda: 0.0).people)
