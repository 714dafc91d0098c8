"""A statement that the user ended something ends their earlier statement of having or
doing it, and nothing else.

Everyday phrasings written for this test (not from any dev set, and apart from the
statements bench's pairs).
"""

from __future__ import annotations

import pytest

from shiyi.memory.text.endings import ended_thing, ends, ends_alike


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have a caravan.", "I sold my caravan."),
        ("I have a caravan.", "I've finally got rid of the caravan."),
        ("I own a sailing dinghy.", "I sold the sailing dinghy two years ago."),
        ("I play badminton on Tuesdays.", "I gave up badminton."),
        ("I practise karate.", "I quit karate last spring."),
        ("I do a ceramics course on Mondays.", "I dropped the ceramics course."),
        ("I have a Disney+ subscription.", "I cancelled Disney+."),
        ("I have an Audible membership.", "I cancelled my Audible membership."),
        ("I work for Siemens.", "I resigned from Siemens and joined Bosch."),
        ("I work at the bakery on Main Street.", "I quit the bakery."),
        ("I'm a member of the rowing club.", "I left the rowing club."),
        ("I'm on the parish council.", "I stepped down from the parish council."),
        ("I belong to a hiking group.", "I dropped out of the hiking group."),
        ("I'm seeing Priya.", "Priya and I split up in March."),
        ("I'm engaged to Tom.", "I called off my engagement to Tom."),
        ("I smoke.", "I gave up smoking."),
        ("I teach yoga at the leisure centre.", "I stopped teaching yoga at the leisure centre."),
        ("I run a food truck.", "I closed my food truck."),
        ("Noor and I are engaged.", "Noor and I broke up."),
        # a thing held by name: ended by its name or its kind
        ("My van is a Ford Transit.", "I traded in my Transit for an electric van."),
        ("Our car is a Skoda Octavia.", "We sold our car."),
        ("My laptop is a ThinkPad X1.", "I swapped my ThinkPad for a MacBook."),
        # a relative's ending ends their own holding
        ("My brother plays rugby.", "My brother gave up rugby."),
        ("My dad works at the post office.", "My dad retired from the post office."),
        ("Ana has a Spotify subscription.", "Ana cancelled her Spotify subscription."),
        ("My sister is dating Tom.", "My sister and Tom broke up."),
        # a place one belongs to, named by its name alone
        ("I go to St Mary's school.", "I left St Mary's."),
        ("I sing in the Hallé choir.", "I left the Hallé."),
    ],
)
def test_an_ending_ends_the_statement_of_holding_it(old: str, new: str) -> None:
    assert ends(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I work for Siemens.", "I left Siemens early today."),  # for the day
        ("I work at the hospital.", "I left the hospital at six."),
        ("I play the violin.", "I left my violin at my sister's."),  # put down somewhere
        ("I have a horse.", "I sold my old horse trailer."),  # another thing
        ("I have a car.", "I sold my motorbike."),
        ("I have a phone.", "I dropped my phone."),  # a fall, not an ending
        ("I'm married to Lena.", "Lena and I split the dessert."),
        ("Noor and I are engaged.", "Omar and I broke up."),  # another person
        ("I love the choir.", "I left the choir."),  # an opinion, not a holding
        ("I don't have a car.", "I sold my car."),  # nothing held
        ("I have a Google Pixel.", "I quit Google."),  # a phone is not a workplace
        ("I play tennis.", "I quit squash."),
        ("I swim on Fridays.", "I stopped going to the gym."),
        ("My car is a Honda Civic.", "I sold my old bike."),
        ("My car is a Honda Civic.", "I swapped my shift for Tuesday's."),
        ("My car is red.", "I sold my car."),  # not a thing held by name
        ("I go to St Mary's school.", "I left St Anne's."),  # another name
        ("I go to St Mary's school.", "I left St Mary's early today."),
        ("I play rugby.", "My brother gave up rugby."),  # someone else's ending
        ("My brother plays rugby.", "I gave up rugby."),
        ("My brother plays rugby.", "My sister gave up rugby."),
        ("My dad works at the post office.", "My dad left the post office early today."),
    ],
)
def test_an_ending_of_something_else_ends_nothing(old: str, new: str) -> None:
    assert not ends(new, old)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I gave up coffee.", "I quit coffee."),
        ("I left the orchestra.", "I'm no longer in the orchestra."),
        ("I cancelled my Netflix account.", "I don't have a Netflix account anymore."),
        ("Sam and I broke up.", "I broke up with Sam."),
    ],
)
def test_two_endings_of_one_thing_say_the_same(a: str, b: str) -> None:
    assert ends_alike(b, a) and ends_alike(a, b)


def test_endings_of_different_things_or_a_holding_are_not_alike() -> None:
    assert not ends_alike("I gave up coffee.", "I gave up tea.")
    assert not ends_alike("I left the orchestra.", "I play in the orchestra.")


def test_what_ended_is_read_up_to_when_or_why() -> None:
    assert ended_thing("I sold my old van last week because it kept breaking down.") == (
        "old",
        "van",
    )
    assert ended_thing("I left Google and joined Meta.") == ("googl",)
    assert ended_thing("I left at 9:30 PM, just like we planned.") == ()
    assert ended_thing("I stopped by for a bit.") == ()
    assert ended_thing("I dropped off the cake I baked at the shelter.") == ()
    assert ended_thing("I went to the gym.") == ()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I ride a Vespa to the office.", "Sold the Vespa in March, I cycle in now."),
        ("I play in a pub quiz team.", "Left the quiz team, too many late nights."),
        ("I bank with Halifax.", "Opened a Nationwide account and closed my Halifax account."),
        ("I'm learning Italian at evening class.", "Gave up on Italian, no time."),
        ("I have a Kindle.", "My Kindle died on me last week."),
        ("I drive a Fiat Panda.", "The Panda got written off in the crash, so I take the bus."),
        ("I work as a welder at Harland's", "I left Harland's and started at a boatyard"),
        ("My girlfriend is Noor", "Noor and I broke up"),
        ("We have a rabbit called Clover", "Clover passed away on Sunday"),
    ],
)
def test_an_ending_said_in_chat_ends_the_holding(old: str, new: str) -> None:
    assert ends(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I ride a Vespa to the office.", "My brother sold his Vespa, so he walks now."),
        ("I bank with Halifax.", "Closed my old Nationwide account."),
        ("I have a Kindle.", "The kettle died on me this morning."),
        ("I drive a Fiat Panda.", "If the Panda gets written off, I'll take the bus."),
        ("My brother is dating Noor", "Noor and I broke up"),  # the brother's, not ours
        ("We have a rabbit called Clover", "It died down after a while"),
    ],
)
def test_a_chatty_ending_of_something_else_ends_nothing(old: str, new: str) -> None:
    assert not ends(new, old)


def test_an_ending_within_an_earlier_statement_names_only_what_it_holds() -> None:
    from shiyi.memory.text.endings import ended_within

    assert ended_within("Cancelled Audible, too many unread books.", "I pay for Audible monthly.")
    assert not ended_within("I sold my Audible vouchers.", "I pay for Audible monthly.")
    assert not ended_within("I pay for Audible monthly.", "I pay for Audible monthly.")
