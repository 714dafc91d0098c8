"""Whom a statement is about: a person named beside a relation is its subject, a person
the user did something with is its object (the user's statement).

Phrasings written for this test from everyday English.
"""

from __future__ import annotations

import pytest

from shiyi.memory.text.subjects import subject_of

USERS = ["user", "me", "i"]

SUBJECTS = {
    # the named person is the sentence's subject, however they are introduced
    ("Ana", "My sister Ana lives in Porto"): ("ana",),
    ("Ana", "Ana, my sister, lives in Porto"): ("ana",),
    ("Sam", "my best friend Sam moved to Oslo"): ("sam",),
    ("Rex", "Our dog Rex is 5"): ("rex",),
    ("sister", "My sister lives in Porto"): ("sister",),
    # ... or the object of the user's sentence: the user's slot
    ("Ana", "I visited my sister Ana in Porto"): (),
    ("Tom", "I live with Tom"): (),
    ("Tom", "I met Tom, my brother, in Rome"): (),
}


@pytest.mark.parametrize(("about", "value"), SUBJECTS)
def test_a_named_entity_is_the_subject_only_when_the_sentence_is_about_it(
    about: str, value: str
) -> None:
    assert subject_of([about], value, USERS) == SUBJECTS[(about, value)]
