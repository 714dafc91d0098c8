"""A question searched without how it is asked of the assistant (shiyi.memory.recall.framing)."""

from __future__ import annotations

import pytest

from shiyi.memory.recall.framing import asked


@pytest.mark.parametrize(
    ("typed", "searched"),
    [
        (
            "hey, quick question - do you remember when Caroline went to the group? thanks!",
            "when Caroline went to the group?",
        ),
        ("Do you remember what Melanie painted?", "What Melanie painted?"),
        ("Can you remind me of Gina's dance studio name?", "Gina's dance studio name?"),
        ("Hi! I was wondering, when did Jon open his studio?", "When did Jon open his studio?"),
        ("Hello AI. What did I say my budget was?", "What did I say my budget was?"),
        ("could you tell me whether Sam sold the car", "Sam sold the car"),
        ("So what did Mel paint?", "What did Mel paint?"),
        ("What did Tom bake? Thanks a lot!", "What did Tom bake?"),
        ("你还记得小明上周去哪了吗？谢谢", "小明上周去哪了吗？"),
        ("请问国庆节他去了哪里？", "国庆节他去了哪里？"),
    ],
)
def test_the_greeting_request_and_thanks_are_set_aside(typed: str, searched: str) -> None:
    assert asked(typed) == searched


@pytest.mark.parametrize(
    "question",
    [
        "What does Caroline remember about her grandma?",  # "remember" is what is asked
        "Well-being tips Caroline shared?",  # "Well-" is no greeting
        "OK-ish plan for the party?",
        "What did she bring to the party",  # "ty" of "party" is no thanks
        "Who did Ana thank after the show?",
        "thanks",  # all framing: searched as typed
        "Hello",
    ],
)
def test_a_question_without_framing_is_searched_as_typed(question: str) -> None:
    assert asked(question) == question


def test_a_long_pasted_text_keeps_its_words() -> None:
    pasted = "log line" + " " * 200_000 + "end of log"
    assert asked(pasted) == pasted
    assert asked("Do you remember " + pasted + " thanks!") == "Log line" + pasted[8:]
