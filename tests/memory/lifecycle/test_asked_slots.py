"""A yes-no question about the user is answered from the slot its words would state, so
the fact that answers it is offered although it shares no word with the question.

Everyday phrasings written for this test (not from any dev set).  Real stores on both
backends.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from shiyi.memory.lifecycle.asked_slots import asked_slot
from shiyi.memory.lifecycle.explicit import Statement
from tests.memory.lifecycle.conftest import MemoryFactory, user_event
from tests.support.records import seed


@pytest.mark.parametrize(
    ("question", "slot"),
    [
        ("Am I vegetarian?", "diet"),
        ("Am I still single?", "marital status"),
        ("am i married", "marital status"),
        ("Do I live in Leeds?", "lives in"),
        ("Do I work at Bosch?", "works at"),
        ("Am I 35?", "age"),
        ("Do I have a car?", "number of car"),
        ("Where do I live?", "lives in"),
        ("Where do I live these days?", "lives in"),
        ("What town do I live in?", "lives in"),
        ("Where am I based now?", "lives in"),
        ("Who do I work for?", "works at"),
        ("Which company do I work at?", "works at"),
        ("Where do I study?", "studies at"),
        ("What do I do for a living?", "job"),
        ("What's my job?", "job"),
        ("How old am I?", "age"),
        ("Who am I married to?", "partner"),
        ("Who am I dating?", "partner"),
        ("Which company am I working for?", "works at"),
        ("Which city am I in now?", "lives in"),
        ("Who is my dentist?", "dentist"),
        ("What is my favourite colour?", "favourite colour"),
        ("How many kids do I have?", "number of children"),
        ("我住在哪里？", "lives in"),
        ("我现在在哪儿上班？", "works at"),
        ("我多大了？", "age"),
        ("我叫什么名字？", "name"),
        ("我的生日是哪天？", "生日"),
    ],
)
def test_a_yes_no_question_asks_after_the_slot_its_words_state(question: str, slot: str) -> None:
    assert asked_slot(question) == slot


@pytest.mark.parametrize(
    "question",
    [
        "Am I right?",  # no slot
        "Do I need a licence for a motorbike?",
        "Is my sister vegan?",  # someone else's
        "What should I eat tonight?",  # asks for advice
        "What do I do now?",
        "Where do I put the keys?",
        "Who do I call for help?",
        "Where does my sister live?",  # someone else's
        "What is my sister's address?",
        "Where do I go running?",  # no slot
        "Who am I meeting tomorrow?",
        "Which hotel am I staying at?",
        "Do I need an umbrella today?",
        "What do I do if the printer jams?",
        "我妹妹住在哪里？",  # the sister's
        "我应该吃什么？",  # advice
        "I'm vegetarian.",  # a statement
        "Am I " + "very " * 100 + "tired?",  # long: no question of a slot
        "",
    ],
)
def test_anything_else_asks_after_no_slot(question: str) -> None:
    assert asked_slot(question) == ""


def test_the_users_current_fact_of_the_asked_slot_is_offered_first(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    memory.remember("I'm vegetarian.")
    meat = memory.remember_outcome(Statement("I started eating meat again."))
    memory.remember("My sister is vegan.")  # hers: answers nothing about the user
    someone = memory.scoped(replace(memory.viewer, user_id="someone"))
    vegan = someone.remember_outcome(Statement("I'm vegan."))
    offered = memory.prefetch("Am I vegetarian?")
    assert offered and offered[0].id == meat.fact.id
    texts = [hit.text for hit in offered]
    assert not any("I'm vegetarian." in text for text in texts)  # superseded
    assert vegan.fact.id not in {hit.id for hit in offered}  # another user's
    # The other user asking is answered from their own slot only.
    theirs = someone.prefetch("Am I vegetarian?")
    assert theirs and theirs[0].id == vegan.fact.id
    assert meat.fact.id not in {hit.id for hit in theirs}
    # What the caller keeps is kept: a fact already shown is not offered again.
    assert all(
        hit.id != meat.fact.id
        for hit in memory.prefetch("Am I vegan?", lambda h: h.id != meat.fact.id)
    )


def test_a_search_asking_after_a_slot_puts_the_current_fact_above_earlier_askings(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    seed(memory, [user_event(i, "Where do I live?", session=f"s{i}") for i in range(3)])
    memory.remember("I live in Lisbon.")
    porto = memory.remember_outcome(Statement("We relocated to Porto last month."))
    hits = memory.search("where do I live", limit=3)
    assert hits[0].id == porto.fact.id and hits[0].paths == {"slot": 1}
    assert hits[0].score > hits[1].score  # scores fall with the order
    assert all("Lisbon" not in hit.text for hit in hits)  # superseded
    # A single path is left as that path found it; so is a search asking after no slot.
    assert memory.search("where do I live", mode="keyword", limit=3)[0].paths.get("slot") is None
    assert all(h.paths.get("slot") is None for h in memory.search("trips to Porto", limit=3))
