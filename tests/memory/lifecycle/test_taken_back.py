"""A correction or a change of mind takes back the statement it means: the newest the
correction fits, read with its value in place; the plan a change of mind is about.  Real
stores on both backends, the real MiniLM embedder; everyday phrasings written for this
test."""

from __future__ import annotations

from shiyi.memory.lifecycle.explicit import Statement
from tests.memory.lifecycle.conftest import MemoryFactory, statuses


def test_a_correction_replaces_what_was_just_said_with_the_value_in_place(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    memory.remember("My allotment plot is number 14.")
    memory.remember("Book club meets on the second Tuesday at 7pm.")
    fixed = memory.remember_outcome(Statement("Sorry, I meant 7:30pm"))
    assert fixed.outcome == "replaced"
    assert fixed.fact.value == "Book club meets on the second Tuesday at 7:30pm."
    assert [f.value for f in fixed.replaced] == ["Book club meets on the second Tuesday at 7pm."]
    # a correction means the newest statement it fits, not only the newest
    plot = memory.remember_outcome(Statement("Oops, 41 not 14"))
    assert plot.fact.value == "My allotment plot is number 41."
    assert statuses(memory) == {
        "My allotment plot is number 14.": "superseded",
        "My allotment plot is number 41.": "active",
        "Book club meets on the second Tuesday at 7pm.": "superseded",
        "Book club meets on the second Tuesday at 7:30pm.": "active",
    }


def test_a_corrected_slot_keeps_its_key(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    first = memory.remember_outcome(Statement("Portland", key="hometown"))
    fixed = memory.remember_outcome(Statement("Actually Seattle, not Portland"))
    assert fixed.fact.key == first.fact.key and fixed.fact.value == "Seattle"
    assert [f.id for f in fixed.replaced] == [first.fact.id]


def test_a_change_of_mind_replaces_the_plan_it_is_about(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    memory.remember("We're planning to get a Labrador puppy in the spring.")
    memory.remember("I'm going to redo the bathroom tiles in March.")
    memory.remember("My favourite film is Paddington 2.")
    changed = memory.remember_outcome(
        Statement("Changed our minds, we're adopting a rescue greyhound instead")
    )
    assert [f.value for f in changed.replaced] == [
        "We're planning to get a Labrador puppy in the spring."
    ]
    assert statuses(memory)["I'm going to redo the bathroom tiles in March."] == "active"


def test_what_takes_nothing_back_leaves_every_statement(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    kept = ["I have 2 cats.", "I'm going to Lisbon in May.", "My favourite film is Paddington 2."]
    for text in kept:
        memory.remember(text)
    for text in (
        "Actually I have 3 kids",  # another thing counted
        "Actually, I also have a rabbit",  # an addition
        "Changed my mind about the haircut, keeping it long",  # no plan it is about
    ):
        assert memory.remember_outcome(Statement(text)).replaced == ()
    assert all(statuses(memory)[text] == "active" for text in kept)


def test_a_plain_confirmation_of_where_one_lives_is_no_second_statement(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    memory.remember("I live in Ghent.")
    again = memory.remember_outcome(Statement("Yep, still in Ghent"))
    assert again.outcome == "confirmed" and again.fact.value == "I live in Ghent."


def test_a_relation_and_the_name_it_is_given_are_one_person(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    memory.remember("My sister lives in Porto.")
    memory.remember("My brother Luis is a chef.")
    memory.remember("My sister Ana moved to Madrid.")
    memory.remember("My brother works as a teacher now.")
    assert statuses(memory) == {
        "My sister lives in Porto.": "superseded",
        "My sister Ana moved to Madrid.": "active",
        "My brother Luis is a chef.": "superseded",
        "My brother works as a teacher now.": "active",
    }


def test_a_relation_two_people_answer_to_is_neither(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    for text in (
        "My sister Ana lives in Porto.",
        "My sister Bea lives in Lyon.",
        "My sister moved to Madrid.",
        "My friend Carla lives in Rome.",
        "My friend Dan moved to Oslo.",  # two named friends are two people
    ):
        memory.remember(text)
    assert set(statuses(memory).values()) == {"active"}
