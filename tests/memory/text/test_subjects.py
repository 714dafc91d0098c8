"""Whom a statement is about: a person named beside a relation is its subject, a person
the user did something with is its object (the user's statement).

Phrasings written for this test from everyday English.
"""

from __future__ import annotations

import pytest

from shiyi.memory.text.subjects import named_kin, subject_of

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


RELATIONS = {
    ("Ana", "My sister Ana moved to Madrid"): "sister",
    ("Ana", "Ana, my sister, moved to Madrid"): "sister",
    ("Ana", "my older sister Ana lives in Rome"): "older sister",
    ("Rex", "Our dog Rex turned 4"): "dog",
    ("Sam", "Sam my best friend works at the bakery"): "best friend",
    # no relation of the user's beside the name
    ("Ana", "I visited Ana in Madrid"): "",
    ("Ana", "My friend and Ana went hiking"): "",
    ("Ana", "Ana is my sister"): "",
    ("Ana", "My sister's friend Ana moved"): "",
}


@pytest.mark.parametrize(("name", "value"), RELATIONS)
def test_the_relation_a_name_is_introduced_by(name: str, value: str) -> None:
    assert named_kin(value, name) == RELATIONS[(name, value)]
