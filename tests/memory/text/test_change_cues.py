"""Word tests of a chatty update: said as a settled change by the same person, sharing a
topic.  Everyday phrasings written for this test, apart from the statements bench's pairs."""

from __future__ import annotations

import pytest

from shiyi.memory.text.change_cues import (
    left_instead,
    said_as_a_change,
    says_it_changed,
    shared_names,
    shared_topic,
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "I read the news on the BBC app.",
            "Switched to the Guardian app, the BBC one kept crashing.",
        ),
        (
            "I get my veg box from Riverford.",
            "These days the veg box comes from Abel & Cole instead.",
        ),
        ("My gym is the one on Mill Road.", "Moved gyms, I'm at the leisure centre now."),
        ("我每天喝两杯咖啡。", "我现在改成每天喝一杯咖啡了。"),
    ],
)
def test_a_settled_change_sharing_a_topic_is_read(old: str, new: str) -> None:
    assert says_it_changed(new, old) and shared_topic(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I read the news on the BBC app.", "Thinking of switching to the Guardian app."),  # a plan
        ("I read the news on the BBC app.", "Should I switch to the Guardian app?"),
        ("I read the news on the BBC app.", "My dad switched to the Guardian app."),  # another
        ("I swim on Tuesdays.", "This Tuesday I'm skipping the pool, I'm at the dentist instead."),
        ("I swim on Tuesdays.", "I used to swim on Fridays instead."),
        ("I swim on Tuesdays.", "Now I also do aqua aerobics on Fridays."),  # added alongside
        ("I swim on Tuesdays.", "Moved my swim to the evening, still every Tuesday."),
        ("我每天喝两杯咖啡。", "如果戒了咖啡，我可能会改成喝茶。"),
    ],
)
def test_a_plan_an_exception_or_another_persons_change_is_not(old: str, new: str) -> None:
    assert not says_it_changed(new, old)


def test_the_topic_leaves_out_people_numbers_and_grammar() -> None:
    assert not shared_topic("My brother is a vet now.", "My brother is a chef.")
    assert not shared_topic("I take 40mg now.", "I take 20mg.")
    assert shared_topic("I take 40mg of statins now.", "I take 20mg of statins.") == {"statin"}
    assert not shared_topic("豆豆换了一家宠物医院。", "我养了一只柯基，叫豆豆。")  # one pair only
    assert not said_as_a_change("x" * 500 + " now")


def test_a_move_from_a_name_the_earlier_statement_holds_leaves_it_behind() -> None:
    from shiyi.memory.text.change_cues import left_behind

    old = "I keep all my recipes in Evernote."
    assert left_behind("Moved all my recipes from Evernote to Paprika.", old)
    assert not left_behind("Moved my sister's recipes from OneNote to Paprika.", old)
    assert not left_behind("Drove from Leeds to York.", old)


def test_a_story_of_the_past_is_no_change() -> None:
    assert not said_as_a_change("Back in my twenties I ran every morning, can't imagine it now")
    assert said_as_a_change("Left the bakery back in March, I'm at a café now")


def test_names_inside_a_sentence_are_shared_but_not_days_or_its_first_word() -> None:
    assert shared_names(
        "I'm at the Barnardo's shop on Thursdays now", "I help at Barnardo's on Tuesdays"
    ) == {"barnardo"}
    assert shared_names("Now I go on Tuesdays in May", "I went on Tuesdays in May") == set()
    assert shared_names("Crown shifts are over. Crown is sold", "Behind the bar at the Crown") == (
        set()
    )  # a sentence's first word is capitalised anyway


def test_what_an_update_is_done_instead_of() -> None:
    assert left_instead("I take the bus now instead of cycling, my knee") == {"cycl"}
    assert left_instead("Tea rather than coffee these days") == {"coffe"}
    assert left_instead("I switched to tea") == frozenset()
