"""Statements naming other values of a closed set, or other names, never say the same thing;
a statement that says its value changed, and is otherwise the earlier sentence, replaces it.

Everyday phrasings written for this test (not from any dev set).
"""

from __future__ import annotations

import pytest

from shiyi.memory.text.contrasts import (
    contrasted,
    frame,
    named_values,
    replaces_value,
    says_again,
    withdraws,
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I go running on Mondays", "I go running on Tuesdays"),
        ("Our anniversary is in March", "Our anniversary is in May"),
        ("My class is in the morning", "My class is in the evening"),
        ("I play on weekends", "I play on weekdays"),
        ("I sleep on the left side", "I sleep on the right side"),
        ("We meet for lunch", "We meet for dinner"),
        ("My favourite season is summer", "My favourite season is winter"),
        ("I run on Mondays", "I run on Mondays and Thursdays"),  # another schedule
        ("I went to Lisbon last year", "I'm going to Lisbon next year"),
        ("I have a call today", "I have a call tomorrow"),
        ("I work with Tom", "I work with Tim"),
        ("My sister Ana lives in Porto", "My sister Ana lives in Lisbon"),
        ("I take my pills at 8am", "I take my pills at 8pm"),  # one hour, other halves
        ("The bus leaves at 6:15 a.m.", "The bus leaves at 6:15 pm"),
    ],
)
def test_other_values_or_other_names_contrast(a: str, b: str) -> None:
    assert contrasted(a, b) and contrasted(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I live in Berlin", "I live in Berlin, Germany"),  # a detail added, nothing changed
        ("I still go running on Mondays", "I go running every Monday"),
        ("My favourite colour is green", "My favorite color is green"),
        ("You're right, I left Berlin", "I left Berlin"),  # "right" and "left": no sides
        ("I may go to Rome", "I might go to Rome"),  # "may": no month in small letters
        ("I like hiking", "I love hiking"),  # no value of a closed set: embeddings decide
        ("I get up at 7am", "I get up at 7"),  # an hour without a half is either
        ("I get up at 7am", "I still get up at 7 a.m."),
        ("I eat at 7pm and sleep at 11pm", "I sleep at 11pm"),
    ],
)
def test_the_same_values_or_no_values_do_not_contrast(a: str, b: str) -> None:
    assert not contrasted(a, b) and not contrasted(b, a)


def test_values_are_read_in_small_letters_and_plurals() -> None:
    assert named_values("Lunch on MONDAYS, dinner in May") == {
        "weekday": frozenset({"monday"}),
        "meal": frozenset({"lunch", "dinner"}),
        "month": frozenset({"may"}),
    }


def test_the_frame_puts_each_value_as_its_set_and_drops_when_words() -> None:
    assert frame("I usually go running on Tuesdays now") == ("i", "go", "running", "<weekday>")
    assert frame("I wake up at 6am") == frame("I wake up at 7 o'clock these days")
    assert frame("My team lead is Omar now") == ("my", "team", "lead", "<name>")
    assert frame("I went to Lisbon last year") == ("i", "went", "to", "<name>", "<relative>")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I usually go running on Mondays.", "I usually go running on Tuesdays now."),
        ("I wake up at 6am.", "I wake up at 7 now."),
        ("The standup is at 9:30.", "The standup is at 10:00 from now on."),
        ("I take 2 sugars in my tea.", "I take one sugar in my tea instead."),
        ("We have dinner at 8.", "We have lunch at 8 nowadays."),
        ("My team lead is Sara.", "My team lead is Omar now."),  # another name
        ("I'm learning Spanish.", "I'm learning Japanese now."),
        ("I ride the tram to college.", "I ride the bus to college now."),  # transport
        ("I walk to school.", "I take the bus to school now."),  # walking is on foot
        ("I drive to the depot.", "I cycle to the depot these days."),
        ("My phone is an Android.", "My phone is an iPhone now."),  # a brand's inner capital
        ("我每周跑步三次。", "我现在每周跑步五次。"),  # Chinese: 现在, another number
        ("I start work at 9.", "I start work at noon now."),  # noon and midnight are 12
        ("I go to bed at 11.", "These days I go to bed at midnight."),
    ],
)
def test_a_changed_value_replaces_the_same_sentence(old: str, new: str) -> None:
    assert replaces_value(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I have a meeting on Monday.", "I have a meeting on Tuesday."),  # not said to change
        ("I went running on Monday.", "I went running on Tuesday."),
        ("I usually go running on Mondays.", "I go swimming on Tuesdays now."),  # other frame
        ("I usually go running on Mondays.", "I usually go running on Mondays now."),  # same
        ("I'm learning Spanish.", "I'm learning Japanese now too."),  # one more
        ("I have lunch at 12.", "I have lunch at noon now."),  # the same time
        ("I'm learning the guitar.", "I'm learning the piano now."),  # no value to compare
        ("at 7", "at 8 now"),  # too little of a sentence to call it the same one
        ("I ride the tram to college.", "I ride the bus to the stadium."),  # not said to change
        ("I drive to the depot.", "I take the bus to the stadium now."),  # another place
        ("I walk the dog to the park.", "I take the dog to the vet now."),  # no travel verb
        ("我每周跑步三次。", "我现在也每周游泳五次。"),  # also, and another frame
        ("我有一个哥哥。", "我现在有一个妹妹。"),  # no other number: another relative
    ],
)
def test_anything_else_replaces_nothing(old: str, new: str) -> None:
    assert not replaces_value(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I go climbing on Saturdays.", "I still go climbing every Saturday."),
        ("I live in Berlin", "I live in Berlin now"),
        ("I don't eat pork", "I still don't eat pork"),
        ("我喜欢游泳。", "我一直都喜欢游泳。"),
        ("我是老师", "我还是老师"),
    ],
)
def test_the_same_frame_and_values_say_it_again(old: str, new: str) -> None:
    assert says_again(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I went to Lisbon last year.", "I'm going to Lisbon next year."),
        ("I go climbing on Saturdays.", "I go climbing on Sundays."),
        ("I eat pork", "I don't eat pork"),
        ("I moved to Berlin", "I moved from Berlin"),
        ("i live in berlin", "i live in munich"),
        ("I have a call tomorrow", "I have a call today"),
        ("我喜欢游泳", "我不喜欢游泳"),
        ("我有一个哥哥", "我有一个妹妹"),
        ("I take my medication at 8am", "I take my medication at 8pm"),
    ],
)
def test_another_value_word_or_negation_is_not_said_again(old: str, new: str) -> None:
    assert not says_again(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I drink alcohol.", "I stopped drinking alcohol."),
        ("I have a landline.", "I don't have a landline anymore."),
        ("I eat meat.", "I no longer eat meat."),
        ("I smoke.", "I quit smoking last year."),
        ("I don't eat meat.", "I eat meat again."),
        ("I go running on Mondays.", "I don't go running anymore."),  # when it held aside
        ("I stopped drinking coffee.", "I drink coffee every morning."),
        ("I wear glasses.", "I don't wear glasses anymore since the surgery."),  # a reason
        ("I run on Mondays.", "I stopped running because of my knee."),
    ],
)
def test_a_denial_in_the_same_words_withdraws_the_statement(old: str, new: str) -> None:
    assert withdraws(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I like cats.", "I don't like dogs."),  # another thing
        ("I eat meat.", "I eat meat every day."),  # no denial
        ("I don't eat meat.", "I still don't eat meat."),  # both deny
        ("I run 5 km.", "I don't run 10 km."),  # another number
        ("I run on Tuesdays.", "I don't run on Mondays anymore."),  # another day
    ],
)
def test_anything_else_withdraws_nothing(old: str, new: str) -> None:
    assert not withdraws(new, old)


def test_a_way_of_travelling_said_with_its_verb_names_its_means() -> None:
    assert named_values("I drive to the depot")["transport"] == {"car"}
    assert named_values("She cycles into town")["transport"] == {"bike"}
    assert contrasted("I drive to work.", "I take the tube to work.")  # never one repeated
    assert not contrasted("I drive to work.", "I take the car to work.")
