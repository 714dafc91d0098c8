"""Who a question names: nicknames, short forms, near-spellings and what a chat calls people."""

from __future__ import annotations

import pytest

from shiyi.memory.text.people import called, named_speakers, query_names

SPEAKERS = {"rebecca", "thomas"}


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What did Mel paint last summer?", {"mel"}),
        ("When did Bex's sister move to Leeds?", {"bex", "leeds"}),
        ("Did Jon and Sam go hiking together?", {"jon", "sam"}),
        # the first word of a sentence is capitalised anyway; days and months are no people
        ("Car trouble: when did Tom fix it? Friday, or in June?", {"tom"}),
        ("what did mel paint?", set()),
    ],
)
def test_the_words_that_may_name_a_person(question: str, names: set[str]) -> None:
    assert query_names(question) == names


@pytest.mark.parametrize(
    ("name", "speakers", "found"),
    [
        # nicknames of the same given name (the nicknames package's table)
        ("bob", {"robert", "susan"}, {"robert"}),
        ("liz", {"elizabeth", "mark"}, {"elizabeth"}),
        ("becky", SPEAKERS, {"rebecca"}),
        ("tom", SPEAKERS, {"thomas"}),
        ("bill", {"william", "mary"}, {"william"}),
        # short forms, either way round
        ("mel", {"melanie", "gina"}, {"melanie"}),
        ("christopher", {"chris", "dana"}, {"chris"}),
        # near-spellings: one letter missing, added, changed or two swapped
        ("jonh", {"john", "maria"}, {"john"}),
        ("carolin", {"caroline", "melanie"}, {"caroline"}),
        ("katharine", {"katherine", "paul"}, {"katherine"}),
        ("deborah", {"debora", "paul"}, {"debora"}),
        # not the same person
        ("ja", {"jane", "ben"}, set()),  # too short for a short form
        ("al", {"alan", "ben"}, {"alan"}),  # but a nickname
        ("sarah", {"paul", "ben"}, set()),
        ("john", {"joan", "paul"}, {"joan"}),  # one edit: the rule's known price
        ("mara", {"maria", "mary"}, set()),  # near both: names neither
        ("dan", {"daniel", "danielle"}, set()),  # short form of both: ambiguous
    ],
)
def test_a_name_names_a_speaker_by_nickname_short_form_or_spelling(
    name: str, speakers: set[str], found: set[str]
) -> None:
    assert named_speakers({name}, speakers) == found


def test_an_exact_name_wins_over_a_near_one() -> None:
    assert named_speakers({"dan"}, {"dan", "daniel"}) == {"dan"}


def test_what_the_other_speaker_calls_someone_names_them() -> None:
    turns = [
        ("thomas", "Thanks, Bex! The cake was amazing."),
        ("rebecca", "Glad you liked it. How was the match, Tommo?"),
        ("thomas", "Hey Bex, did you see the news?"),
        ("rebecca", "My friends call me Becks at work, by the way."),
        ("thomas", "Bye, Leeds!"),  # a place addressed is still whoever is listening
    ]
    calls = called(turns, SPEAKERS)
    assert calls["rebecca"] >= {"bex", "becks"}
    assert calls["thomas"] == {"tommo"}
    assert named_speakers({"bex"}, SPEAKERS, calls) == {"rebecca"}
    assert named_speakers({"tommo"}, SPEAKERS, calls) == {"thomas"}
    assert named_speakers({"bex"}, SPEAKERS) == set()


def test_in_a_group_chat_whom_a_greeting_addresses_is_not_known() -> None:
    turns = [("ana", "Thanks, Bex!"), ("ben", "Hi all"), ("rebecca", "Hello")]
    assert "bex" not in str(called(turns, {"ana", "ben", "rebecca"}))
    # but a name given for oneself is
    assert called([("rebecca", "Just call me Bex.")], {"ana", "ben", "rebecca"}) == {
        "rebecca": {"bex"}
    }
