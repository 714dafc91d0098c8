"""A short turn that only asks names what a question is about and answers nothing: it loses
``ASKING_PENALTY`` after the reply to it took its share, and the turns that tell ("Made my
first bowl that doesn't wobble!") are not lowered.  Phrasings written from everyday chat."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shiyi.memory.models import EventRecord
from shiyi.memory.recall.boosts import ANSWER_SHARE, ASKING_PENALTY, _only_asks, apply_boosts
from shiyi.memory.recall.config import Boosts
from shiyi.memory.recall.query_signals import understand
from tests.memory.recall.test_boosts import JUNE_9, MAY_8


def said(key: str, role: str, iteration: int, text: str) -> EventRecord:
    return EventRecord(key, "conv", "s1", MAY_8, role, text, "imported", iteration)


ASKING = replace(Boosts.none(), asking=True)


def test_a_turn_that_only_asks_loses_and_the_turns_that_tell_do_not() -> None:
    events = {
        "q": said("q", "lea", 0, "How's the pottery class going?"),
        "a": said("a", "sam", 1, "Made my first bowl that doesn't wobble! Glazed it blue."),
    }
    scores = {"q": 2.0, "a": 1.0}
    apply_boosts(scores, events, {}, understand("What has Sam made at pottery?", JUNE_9), ASKING)
    assert scores == {"q": 2.0 - ASKING_PENALTY, "a": 1.0}


def test_the_reply_takes_its_share_of_the_question_before_the_question_is_lowered() -> None:
    events = {
        "q": said("q", "lea", 0, "Still learning the guitar? What song?"),
        "a": said("a", "sam", 1, "Wonderwall, of course."),
    }
    scores = {"q": 2.0, "a": 0.0}
    both = replace(ASKING, neighbours=True)
    apply_boosts(scores, events, {}, understand("What song is Sam learning?", JUNE_9), both)
    assert scores["a"] == pytest.approx(ANSWER_SHARE * 2.0)
    assert scores["q"] == pytest.approx(2.0 - ASKING_PENALTY)


@pytest.mark.parametrize(
    ("text", "only_asks"),
    [
        ("how's the cello going?", True),
        ("Same sign? 😂", True),
        ("what are you playing?", True),
        ("你呢？", True),
        ("Made my first bowl that doesn't wobble!", False),
        (
            "I finally sold the old Ibiza to Gorka's cousin for 600 euros and bought the grey "
            "Corolla hybrid, can you believe it?",
            False,
        ),
    ],
)
def test_only_a_short_turn_ending_in_a_question_only_asks(text: str, only_asks: bool) -> None:
    assert _only_asks(text) is only_asks
