"""Whose words a question to the assistant asks about (shiyi.memory.recall.addressed):
phrasings written from how people talk to an assistant."""

from __future__ import annotations

import pytest

from shiyi.memory.recall.addressed import said_by


@pytest.mark.parametrize(
    "query",
    [
        "Ready to tackle those deadlifts you suggested?",
        "What did you suggest for my back pain?",
        "I logged the RPE like you said.",
        "Can you pull up the packing list you put together?",
        "You've already drafted the cover letter, right?",
        "Is your advice about the visa still valid?",
        "Go through your latest budget plan again.",
        "What was the itinerary you came up with for Kyoto?",
    ],
)
def test_a_question_about_what_the_assistant_said_or_made(query: str) -> None:
    assert said_by(query) == "assistant"


@pytest.mark.parametrize(
    "query",
    [
        "What did I tell you about my knee?",
        "As I mentioned before, I can't eat gluten.",
        "Like I said, the trip is in June.",
        "I already told you my budget, remember?",
        "Did I ever mention my sister's wedding?",
    ],
)
def test_a_question_about_what_the_user_said(query: str) -> None:
    assert said_by(query) == "user"


@pytest.mark.parametrize(
    "query",
    [
        "What do you think of the plan?",  # asks the assistant now, not about its past words
        "Thank you! What should I do next?",
        "Did you know I moved to Lisbon?",
        "I said no to the job offer.",  # the user telling, not asking about their words
        "What is your name?",
        "You drafted the promise after I told you my goals.",  # both: no one is favoured
        "When did Caroline go to the support group?",
    ],
)
def test_a_question_about_neither_or_both_favours_no_one(query: str) -> None:
    assert said_by(query) == ""
