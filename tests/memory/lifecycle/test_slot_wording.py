"""Slot identity beyond the table of known attributes (issue 30): an unlisted key is one
slot however the extractor qualifies or spells it, and in an imported conversation between
named people a fact is about the person who said it.

Real pipeline (a real Memory on both backends, its worker and jobs), scripted extraction
replies worded the way models vary them.
"""

from __future__ import annotations

from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.service import Memory
from tests.memory.lifecycle.conftest import (
    MONDAY,
    MemoryFactory,
    extraction,
    fact,
    say,
    user_event,
)

DAY = 86400.0
ALL = ["active", "pending", "superseded", "expired"]


def facts(memory: Memory) -> list[FactRecord]:
    return memory.store.get_facts(memory.store.facts_by_status(ALL, 100))


def live(memory: Memory) -> list[tuple[str, str]]:
    return sorted((f.key, f.value) for f in facts(memory) if f.status in ("active", "pending"))


def day(i: int, text: str) -> EventRecord:
    return user_event(i, text, session=f"s{i}", ts=MONDAY + i * DAY)


def test_qualified_respelled_and_plural_keys_are_one_slot(open_memory: MemoryFactory) -> None:
    """ "favorite color", "Favourite colour (current)", "preferred colours": one attribute;
    "my rent" and "rent_current" another."""
    memory = open_memory(
        extraction(facts=[fact("favorite color", "blue", about=["user"])]),
        extraction(facts=[fact("my rent", "$900")]),
        extraction(facts=[fact("Favourite colour (current)", "green")]),
        extraction(facts=[fact("rent_current", "$950", about=["user"])]),
        extraction(facts=[fact("preferred colours", "teal")]),
    )
    say(memory, day(1, "My favorite color is blue."))
    say(memory, day(2, "My rent is $900."))
    say(memory, day(3, "My favourite colour is green now."))
    say(memory, day(4, "The rent went up to $950."))
    say(memory, day(5, "I prefer teal these days."))
    assert live(memory) == [("favourite colour", "teal"), ("rent", "$950")]
    old = sorted(f.value for f in facts(memory) if f.status == "superseded")
    assert old == ["$900", "blue", "green"]


def test_attributes_that_share_words_stay_apart(open_memory: MemoryFactory) -> None:
    """Dropping qualifiers never merges two attributes: a favourite colour is not a
    favourite food, a bedtime is not a wake-up time, a "status" is not a "statu"."""
    memory = open_memory(
        extraction(facts=[fact("favourite colour", "green")]),
        extraction(facts=[fact("my favorite food", "pho")]),
        extraction(facts=[fact("current bedtime", "11 pm")]),
        extraction(facts=[fact("wake up time", "7 am")]),
        extraction(facts=[fact("visa status", "approved")]),
        extraction(facts=[fact("order status", "shipped")]),
    )
    for i, text in enumerate(
        ["Green is my colour.", "Pho is the best.", "Bed at 11.", "Up at 7.", "Visa came.", "Sent."]
    ):
        say(memory, day(i + 1, text))
    assert live(memory) == [
        ("bedtime", "11 pm"),
        ("favourite colour", "green"),
        ("favourite food", "pho"),
        ("order status", "shipped"),
        ("visa status", "approved"),
        ("wake up time", "7 am"),
    ]


def said_by(i: int, speaker: str, text: str) -> EventRecord:
    """Turn ``i`` of an imported conversation between two named people."""
    return EventRecord(
        id=f"conv{i}",
        session_id=f"conv{i}",
        run_id="run_conv",
        ts=MONDAY + i * DAY,
        role=speaker,
        content=text,
        segment_type="user_message",
    )


def test_a_named_speakers_statement_is_about_the_speaker(open_memory: MemoryFactory) -> None:
    """Caroline and Melanie talk: whether the model writes ``about: ["Caroline"]``, ``[]``
    or ``["user"]`` for what Caroline says of herself, it is Caroline's slot; Melanie's
    "I live in Lisbon" never replaces Caroline's city, and Caroline's move does."""
    memory = open_memory(
        extraction(facts=[fact("lives in", "Berlin", about=["Caroline"])]),
        extraction(facts=[fact("lives in", "Lisbon")]),
        extraction(facts=[fact("city", "Paris", about=["user", "Paris"])]),
        extraction(facts=[fact("favourite band", "Melanie likes Radiohead", about=["Melanie"])]),
    )
    say(memory, said_by(1, "Caroline", "I live in Berlin."))
    say(memory, said_by(2, "Melanie", "I live in Lisbon."))
    say(memory, said_by(3, "Caroline", "I moved to Paris!"))
    say(memory, said_by(4, "Caroline", "Melanie's favourite band is Radiohead."))
    current = {(f.value, tuple(sorted(f.entities))) for f in facts(memory) if f.status == "active"}
    assert current == {
        ("Paris", ("caroline", "paris")),
        ("Lisbon", ("melanie",)),
        ("Melanie likes Radiohead", ("melanie",)),
    }
    assert [f.value for f in facts(memory) if f.status == "superseded"] == ["Berlin"]


def test_the_users_own_turns_stay_the_users(open_memory: MemoryFactory) -> None:
    """Only named speakers are resolved: the user's own "I" stays the user, also in a chat
    export whose roles are "human" and "ai"."""
    memory = open_memory(
        extraction(facts=[fact("lives in", "Berlin")]),
        extraction(facts=[fact("lives in", "Paris", about=["user"])]),
    )
    say(memory, day(1, "I live in Berlin."))
    say(memory, said_by(2, "human", "I moved to Paris."))
    assert live(memory) == [("lives in", "Paris")]
    assert [f.entities for f in facts(memory) if f.status == "active"] == [["user"]]


def test_two_wordings_of_one_statement_are_one_attribute(open_memory: MemoryFactory) -> None:
    """The extraction of "I'm married" says "marital status", the re-read of the same turn
    says "relationship status": one attribute, so "relationship status: engaged", said
    later, replaces "married" (no table lists either key)."""
    memory = open_memory(
        extraction(facts=[fact("marital status", "married")]),
        extraction(facts=[fact("relationship status", "married")]),
        extraction(facts=[fact("relationship status", "engaged")]),
    )
    say(memory, user_event(1, "I'm married.", session="s1", ts=MONDAY))
    say(memory, user_event(2, "Thanks!", session="s1", ts=MONDAY + 60))
    say(memory, day(3, "We got engaged again, renewing vows."))
    assert live(memory) == [("marital status", "engaged")]
    married = [f for f in facts(memory) if f.value == "married"]
    assert {f.status for f in married} == {"superseded"}


def test_one_answer_naming_two_wordings_keeps_them_apart(open_memory: MemoryFactory) -> None:
    """One extraction giving "sister" and "best friend" the same value from one turn names
    two attributes: a later best friend does not replace the sister."""
    memory = open_memory(
        extraction(facts=[fact("sister", "Anna"), fact("best friend", "Anna")]),
        extraction(facts=[fact("best friend", "Anna"), fact("sister", "Anna")]),
        extraction(facts=[fact("best friend", "Maria")]),
    )
    say(memory, user_event(1, "My sister Anna is also my best friend.", ts=MONDAY))
    say(memory, user_event(2, "Anyway.", ts=MONDAY + 60))
    say(memory, day(3, "Maria is my best friend now."))
    assert live(memory) == [("best friend", "Maria"), ("sister", "Anna")]


def test_a_new_number_is_a_new_value_not_a_repeat(open_memory: MemoryFactory) -> None:
    """ "85 kg" / "82 kg" and "9:45 pm" / "10:30 pm" embed nearly alike; a different
    number is a change (the newer one current), never a confirmation of the old one."""
    memory = open_memory(
        extraction(facts=[fact("weight", "85 kg"), fact("bedtime", "9:45 pm")]),
        extraction(facts=[fact("weight", "82 kg"), fact("bedtime", "10:30 pm")]),
    )
    say(memory, day(1, "I weigh 85 kg and go to bed at 9:45 pm."))
    say(memory, day(2, "Down to 82 kg! Bed at 10:30 pm though."))
    assert live(memory) == [("bedtime", "10:30 pm"), ("weight", "82 kg")]
    assert {f.evidence_count for f in facts(memory)} == {1}


def test_unlisted_keys_are_stored_tidied_not_singularised() -> None:
    from shiyi.memory.lifecycle.slots import AttributeResolver

    attributes = AttributeResolver(None)
    assert attributes("likes").canonical == "likes"  # a verb, not a plural noun
    assert attributes("My favorite colors").canonical == "favourite colours"
    assert attributes("favourite colour").same(attributes("favorite colors"))
    assert "favourite colours" in attributes("favourite colour").lookup_keys


# --- a key's possessor is the slot's subject --------------------------------------------------


def test_a_keys_possessor_names_its_subject() -> None:
    from shiyi.memory.lifecycle.slots import key_owner
    from shiyi.memory.text.subjects import USER_NAMES

    owners = {
        "Ana's city": "Ana",
        "my sister's job": "sister",
        "Mum’s birthday": "Mum",
        "the dog's name": "dog",
        "parents' address": "parents",
        "Project Falcon's deadline": "Project Falcon",
        "the user's sister's city": "sister",
        "Ana's mum's birthday": "Ana's mum",
        "my wife’s favourite food": "wife",
        # the user, a time, or no possessive at all: no other subject
        "user's city": "",
        "users' city": "",
        "my city": "",
        "today's plan": "",
        "next week's goal": "",
        "2024's budget": "",
        "city": "",
        "lives_in": "",
    }
    assert {key: key_owner(key, USER_NAMES) for key in owners} == owners
    assert key_owner("Lena's car", {*USER_NAMES, "lena"}) == ""  # the user's own name


def test_another_persons_city_neither_replaces_the_users_nor_stays_beside_its_update(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    mine = memory.remember("I live in Berlin", key="my city")
    porto = memory.remember("Ana lives in Porto", key="Ana's city")
    lisbon = memory.remember("Ana lives in Lisbon", key="Ana's city")
    statuses = {f.id: f.status for f in facts(memory)}
    assert statuses == {mine.id: "active", porto.id: "superseded", lisbon.id: "active"}
    assert "ana" in lisbon.entities
    moved = memory.remember("Munich", key="user's city")
    assert {f.id: f.status for f in facts(memory)}[mine.id] == "superseded"
    assert moved.status == "active"
    assert memory.forget_entity("Ana").facts == 2


def test_an_extracted_key_naming_a_relative_is_the_relatives_slot(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory(
        extraction(facts=[fact("job", "teacher"), fact("sister's job", "nurse")]),
        extraction(facts=[fact("sister's job", "doctor")]),
        extraction(facts=[fact("today's plan", "gym"), fact("tomorrow's plan", "dentist")]),
    )
    say(memory, day(1, "I teach maths; my sister is a nurse."))
    say(memory, day(2, "My sister just qualified as a doctor!"))
    say(memory, day(3, "Gym today, dentist tomorrow."))
    assert [(k, v) for k, v in live(memory) if "plan" not in k] == [
        ("job", "teacher"),
        ("sister s job", "doctor"),
    ]
    assert {v for k, v in live(memory) if "plan" in k} == {"gym", "dentist"}
