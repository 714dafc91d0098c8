"""A chatty update no slot or ending rule reads replaces the one earlier statement it says
changed; a plan, another person's change, a detail of the same thing or a second thing of
the kind replaces nothing.  Real stores on both backends, the real MiniLM embedder;
everyday phrasings written for this test."""

from __future__ import annotations

from shiyi.memory.lifecycle.explicit import Statement
from tests.memory.lifecycle.conftest import MemoryFactory, statuses


def test_a_settled_chatty_update_replaces_the_statement_it_changes(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    memory.remember("I read the news on the BBC app every morning.")
    memory.remember("I swim at the Parkside pool on Tuesdays.")
    update = memory.remember_outcome(
        Statement("Switched to the Guardian app for news, the BBC one kept crashing.")
    )
    assert [f.value for f in update.replaced] == ["I read the news on the BBC app every morning."]
    assert statuses(memory)["I swim at the Parkside pool on Tuesdays."] == "active"


def test_plans_other_people_and_details_replace_nothing(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    kept = [
        "I read the news on the BBC app every morning.",
        "I swim at the Parkside pool on Tuesdays.",
    ]
    for text in kept:
        memory.remember(text)
    for text in (
        "Thinking of switching to the Guardian app for news.",
        "My dad switched to the Guardian app for news.",
        "Moved my swim at Parkside to the evening, still every Tuesday.",
        "Now I also swim at the Kings pool on Fridays.",
    ):
        assert memory.remember_outcome(Statement(text)).replaced == ()
    assert all(statuses(memory)[text] == "active" for text in kept)


def test_an_ending_of_a_thing_one_statement_names_replaces_it(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    memory.remember("I'm in a quiz team that meets at the Fox and Hounds every Tuesday.")
    memory.remember("I sing in the Fox and Hounds choir on Fridays, great bunch of people.")
    left = memory.remember_outcome(
        Statement("Left the quiz team at the Fox and Hounds, these days I do parkrun instead.")
    )
    assert [f.value for f in left.replaced] == [
        "I'm in a quiz team that meets at the Fox and Hounds every Tuesday."
    ]
    assert (
        statuses(memory)["I sing in the Fox and Hounds choir on Fridays, great bunch of people."]
        == "active"
    )


def test_among_two_of_the_same_days_the_one_sharing_a_name_is_replaced(
    open_memory: MemoryFactory,
) -> None:
    """The weekend job embeds nearer the update (0.62) than the charity shop it changes
    (0.55); the shop's name says which one changed."""
    memory = open_memory()
    shop = "I help out at the Barnardo's charity shop on Saturday mornings."
    desk = "I work weekend shifts on the Travelodge front desk, Saturday and Sunday."
    memory.remember(shop)
    memory.remember(desk)
    moved = memory.remember_outcome(
        Statement(
            "Moved my Barnardo's shifts to Thursdays now instead of Saturdays, so weekends"
            " are free."
        )
    )
    assert [f.value for f in moved.replaced] == [shop]
    assert statuses(memory)[desk] == "active"
