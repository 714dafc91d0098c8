"""What a message explicitly asks to be remembered, and what only looks like it: a reminder,
a question, a reference to something said before.  Phrasings written for this test from
everyday English and Chinese."""

from __future__ import annotations

import pytest

from shiyi.memory.text.directives import asked_to_remember

ASKED = {
    "Remember that my sister Ana lives in Porto.": "My sister Ana lives in Porto.",
    "Please remember: I'm allergic to peanuts": "I'm allergic to peanuts",
    "Don't forget that my mum's birthday is June 3": "My mum's birthday is June 3",
    "Keep in mind that I'm vegetarian. Also, what should I cook?": "I'm vegetarian.",
    "Can you remember that my flight is on Friday?": "My flight is on Friday",
    "Note that the deploy key rotates monthly": "The deploy key rotates monthly",
    "Hey, remember this: the wifi password is hunter2": "The wifi password is hunter2",
    "Just so you know, I quit smoking": "I quit smoking",
    "Remember that my score was 3.5 points": "My score was 3.5 points",
    "记住，我妹妹住在波尔图。你觉得呢？": "我妹妹住在波尔图。",
    "请记住我对花生过敏": "我对花生过敏",
}
NOT_ASKED = [
    "remember to call mum",  # a reminder, not a fact
    "Remember when we hiked? It was fun.",
    "Do you remember my address?",
    "Remember me?",
    "remember that time we went to Rome?",
    "Remember that I told you about my knee",  # a reference, not news
    "remember that",
    "Remember it",
    "I remember that day",
    "Remembering things is hard",
    "What's the weather like?",
    "你记得我住哪吗？",
    "记住我吗",
]


@pytest.mark.parametrize(("message", "statement"), ASKED.items())
def test_an_explicit_request_names_the_statement_to_keep(message: str, statement: str) -> None:
    assert asked_to_remember(message) == statement


@pytest.mark.parametrize("message", NOT_ASKED)
def test_reminders_questions_and_references_ask_for_nothing(message: str) -> None:
    assert asked_to_remember(message) is None
