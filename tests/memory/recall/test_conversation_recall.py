"""Recall on a conversation shaped like real ones (LoCoMo format, two people, dated sessions):
the question's evidence turn ranks first.  Both backends, the real embedding model, the real
importer.  Each case also shows the mechanism is what puts it there: with the query boosts
off, the wrong turn wins (each turn's vector its own text's: a short reply's lead-in, tested
in ``tests/memory/intake/test_event_vectors.py``, would answer some of them already)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.memory.recall.config import Boosts
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import locomo_chat, open_seeded, top_ids

SESSIONS = {
    "1:56 pm on 8 May, 2023": [
        ("Caroline", "Hey Mel! How have you been?"),
        (
            "Melanie",
            "Caroline, I joined a support group too! The support group for parents of teens"
            " meets on Mondays.",
        ),
        ("Caroline", "I went to the LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "Wow, that's amazing! What happened there?"),
        ("Caroline", "People shared their stories and I felt accepted."),
        ("Melanie", "I painted a sunrise over the lake this morning, my favourite so far."),
    ],
    "10:20 am on 9 June, 2023": [
        ("Melanie", "I painted a portrait of my daughter this week."),
        ("Caroline", "Lovely! I've been reading about adoption agencies."),
        ("Melanie", "My sister Ana adopted a puppy called Biscuit from a shelter last month."),
        ("Caroline", "That's sweet, I hope the adoption went smoothly."),
    ],
    "4:05 pm on 20 July, 2023": [
        ("Melanie", "Biscuit chewed through my new running shoes yesterday!"),
        ("Caroline", "Oh no! Were they expensive?"),
        ("Melanie", "Very. I went for a sunrise run by the lake to cool off."),
    ],
}


@pytest.fixture
def memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    chat = locomo_chat(tmp_path / "chat.json", ("Caroline", "Melanie"), SESSIONS)
    opened = open_seeded(tmp_path, memory_store, chat, lead_in=False)
    yield opened
    opened.close()


def without_boosts(memory: Memory) -> Retriever:
    base = memory.retriever
    return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=Boosts.none())


def test_a_question_naming_a_speaker_finds_what_that_speaker_said(memory: Memory) -> None:
    question = "When was Caroline at the support group?"
    # Melanie's turn says "support group" twice and names Caroline: text alone prefers it
    assert top_ids(without_boosts(memory), question) == ["chat:D1:2"]
    assert top_ids(memory.retriever, question) == ["chat:D1:3"]


def test_a_question_about_a_month_finds_the_turn_from_that_month(memory: Memory) -> None:
    question = "What did Melanie paint in June 2023?"
    assert top_ids(memory.retriever, question) == ["chat:D2:1"]
    assert top_ids(memory.retriever, "What did Melanie paint on 8 May, 2023?") == ["chat:D1:6"]


def test_a_date_written_with_slashes_finds_that_days_turn(memory: Memory) -> None:
    # the same words ask for either painting; only the date tells them apart
    assert top_ids(memory.retriever, "What did Melanie paint on 6/9/2023?") == ["chat:D2:1"]
    assert top_ids(memory.retriever, "What did Melanie paint on 2023/05/08?") == ["chat:D1:6"]


def test_a_two_hop_question_reaches_the_turn_through_a_shared_entity(memory: Memory) -> None:
    # "the puppy Melanie's sister adopted" is Biscuit (D2:3); what it damaged is told in
    # another session, in a turn that names Biscuit but neither the sister nor a puppy
    question = "What did the puppy that Melanie's sister adopted damage?"
    assert "chat:D3:1" not in top_ids(without_boosts(memory), question, k=2)
    assert sorted(top_ids(memory.retriever, question, k=2)) == ["chat:D2:3", "chat:D3:1"]


def test_with_lead_ins_the_two_hop_turn_still_comes_up(tmp_path: Path, memory_store: str) -> None:
    """Lead-ins cost this case places: the reply after the sister's puppy ("I hope the
    adoption went smoothly") and the adoption-agency turn now read as the question does,
    and rank between; the bridge still lifts the damage turn from outside the top five."""
    chat = locomo_chat(tmp_path / "chat.json", ("Caroline", "Melanie"), SESSIONS)
    memory = open_seeded(tmp_path, memory_store, chat)
    try:
        question = "What did the puppy that Melanie's sister adopted damage?"
        assert "chat:D3:1" not in top_ids(without_boosts(memory), question, k=5)
        ranked = top_ids(memory.retriever, question, k=4)
        assert ranked[0] == "chat:D2:3" and "chat:D3:1" in ranked
    finally:
        memory.close()


def test_query_memory_text_shows_each_turns_date_and_speaker(memory: Memory) -> None:
    text = memory.query_text("When did Caroline go to the support group?", limit=1)
    assert "2023-05-08" in text
    assert "Caroline: I went to the LGBTQ support group" in text


def test_the_graph_path_finds_turns_by_what_they_are_about(memory: Memory) -> None:
    # no name in the question: the turn is reached through its topics ("running shoes"),
    # the question's "run" meeting the stem of "running"
    hits = memory.retriever.search(
        "What happened to the shoes she wears to run?", mode="graph", limit=2, touch=False
    )
    assert [hit.id for hit in hits][:1] == ["chat:D3:1"]
    assert memory.store.neighbourhood(["shoe"], hops=1, limit=5).event_ids[0].id == "chat:D3:1"


def test_a_topic_is_found_by_its_word_as_well_as_its_stem(memory: Memory) -> None:
    (shoes,) = memory.store.find_entities(["shoes"])
    assert (shoes.type, shoes.name) == ("topic", "shoe")
