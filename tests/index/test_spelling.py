"""Typing slips in a question, read as the words the index holds (shiyi.index.spelling)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from shiyi.index.spelling import (
    MAX_READ,
    MAX_SLIPS,
    Lookup,
    corrections,
    read_as,
    search_terms,
    single_edits,
    slips,
    unknown_words,
)


def held_in(vocabulary: Mapping[str, int]) -> tuple[list[Sequence[str]], Lookup]:
    """A lookup over ``vocabulary`` that records what it was asked."""
    asked: list[Sequence[str]] = []

    def lookup(terms: Sequence[str]) -> dict[str, int]:
        asked.append(terms)
        return {t: vocabulary[t] for t in terms if t in vocabulary}

    return asked, lookup


def test_single_edits_are_deletes_swaps_replaces_and_inserts() -> None:
    edits = single_edits("form")
    assert {"fom", "from", "farm", "forms", "fform"} <= edits
    assert "form" not in edits
    assert "fro" not in edits  # two edits away
    # n deletes, n-1 swaps, 25n replaces and 26(n+1) inserts, less the repeats.
    assert len(single_edits("ab")) < 2 + 1 + 50 + 78


def test_single_edits_reach_accented_letters_both_ways() -> None:
    assert "jose" in single_edits("josé")
    assert "josé" not in single_edits("jose")  # é is not among a word's edits unless it has it
    assert "zoë" in single_edits("zoëy")


def nobody_holds(words: Sequence[str]) -> set[str]:
    return set()


@pytest.mark.parametrize(
    ("text", "slipped"),
    [
        ("which resturant", ["resturant"]),
        ("why becuase", ["becuase"]),
        ("What did Melaine paint?", ["melaine"]),  # a name typed capitalised
        ("Carolnie's necklace", ["carolnie"]),
        ("any hiking trips", []),  # English knows it: another activity than "biking"
        ("the restaurant", []),
        ("waht teh", []),  # under five letters
        ("user3 in 2024", []),  # letters only: "user" is English
        ("I made a DRSABCD sheet", []),  # typed in capitals: an acronym
        ("we hadn't seen it", []),  # "hadn" of "hadn't"
        ("I couldn’t go", []),
    ],
)
def test_a_slip_is_unheld_unknown_lettered_and_long_enough(text: str, slipped: list[str]) -> None:
    assert slips(text, nobody_holds) == slipped


# What the user's memory holds: their own foreign words and names, and "colour".
HELD_FOREIGN = {"pollo", "warung", "jalan", "fleurie", "nasi", "enak", "colour"}


def holds_foreign(words: Sequence[str]) -> set[str]:
    return HELD_FOREIGN & set(words)


@pytest.mark.parametrize(
    ("text", "slipped"),
    [
        ("Ugh, what a day: pollo asado fixes everything", []),  # Spanish in English
        ("lunch at the warung, tikus jalan everywhere", []),  # Indonesian in English
        ("we stayed at Fleurie Bégoule near the lake", []),  # a foreign name
        ("hiked the Fleurie-Bégoule trail", []),  # joined by a hyphen
        ("lunch was nasi yg enak, so good", []),  # past a short unknown "yg"
        ("how often are restroes tetsed", ["restroes", "tetsed"]),  # two slips: neither held
        ("I went to teh resturant", ["resturant"]),  # a short slip beside is no phrase
        ("Kentaa, which resturant?", ["kentaa", "resturant"]),  # apart, not a run
        ("the resturant Melanie chose", ["resturant"]),  # beside a name English knows
        ("my kettel colour", ["kettel"]),  # a British spelling is English
    ],
)
def test_a_word_beside_a_held_word_english_does_not_know_is_a_phrase_not_a_slip(
    text: str, slipped: list[str]
) -> None:
    assert slips(text, holds_foreign) == slipped


def test_beside_an_unheld_unknown_word_both_are_slips() -> None:
    assert slips("Ugh, what a day: polo asado fixes everything", holds_foreign) == ["asado"]
    assert slips("we had tikus jalan", nobody_holds) == ["tikus", "jalan"]


def test_a_word_the_index_holds_is_no_slip_whatever_english_says() -> None:
    holds = lambda words: {"pickleball"} & set(words)  # noqa: E731
    assert slips("pickleball with Kentaa", holds) == ["kentaa"]


@pytest.mark.parametrize(
    "text",
    [
        "Saya sudah siap untuk langkah selanjutnya, daftar alat yang murah",  # Indonesian
        "Quiero saber cuando llegamos mañana temprano",  # Spanish
    ],
)
def test_a_text_in_another_language_is_not_read_for_slips(text: str) -> None:
    assert unknown_words(text) == []


def test_a_short_english_question_with_one_slip_is_still_english() -> None:
    assert unknown_words("where is the resturant") == ["resturant"]


def test_many_slips_are_jargon_or_another_language() -> None:
    names = ["Abcdex", "Bcdefx", "Cdefgx", "Defghx", "Efghix"]
    assert len(slips(" ".join(names[:MAX_SLIPS]), nobody_holds)) == MAX_SLIPS
    assert slips(" ".join(names), nobody_holds) == []


def test_a_slip_reads_as_the_held_word_most_documents_hold() -> None:
    asked, lookup = held_in({"restaurant": 4, "restaurants": 1, "pottery": 9})
    found = corrections("which resturant", nobody_holds, lookup)
    assert found == {"resturant": "restaurant"}
    assert len(asked) == 1  # every candidate in one lookup


def test_the_more_held_of_two_near_words_wins() -> None:
    _, lookup = held_in({"carts": 2, "cards": 7})
    assert corrections("cardx", nobody_holds, lookup) == {"cardx": "cards"}


def test_a_correction_is_searched_with_its_stem_when_the_index_keeps_stems() -> None:
    found = {"paintde": "painted"}
    assert search_terms(found, ["paintde"], stems=True) == ["painted", "paint"]
    assert search_terms(found, ["paintde"], stems=False) == ["painted"]
    assert search_terms(found, ["painted", "paintde"], stems=False) == []  # already asked


def test_nothing_is_looked_up_without_a_slip_and_nothing_found_without_a_near_word() -> None:
    asked, lookup = held_in({"restaurant": 4})
    assert corrections("restaurant hiking", nobody_holds, lookup) == {}
    assert asked == []
    assert corrections("xqzvwk", nobody_holds, lookup) == {}
    assert len(asked) == 1


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("What did Melaine paint?", "What did Melanie paint?"),
        ("which resturant, the resturant downtown", "which restaurant, the restaurant downtown"),
        ("Resturant names", "Restaurant names"),
        ("the resturants", "the resturants"),  # a whole word only
    ],
)
def test_a_text_is_read_with_its_slips_replaced_as_typed(text: str, read: str) -> None:
    assert read_as(text, {"melaine": "melanie", "resturant": "restaurant"}) == read


def test_a_long_text_is_not_looked_up_word_by_word() -> None:
    asked: list[Sequence[str]] = []

    def held(words: Sequence[str]) -> set[str]:
        asked.append(words)
        return set()

    names = [f"Kata{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(500)]
    assert unknown_words(" ".join(names)) == []  # more than MAX_UNKNOWN
    assert slips(" ".join(names), held) == []
    assert asked == []
    tail = " ".join(["plain words here"] * MAX_READ) + " resturant"
    assert unknown_words(tail) == []  # past the words read


def test_a_pasted_run_of_letters_is_no_word_to_correct() -> None:
    asked, lookup = held_in({"aaaa": 1})
    blob = "a" * 1_000_000  # its single edits alone would fill the memory
    assert unknown_words(blob) == []
    assert corrections(blob, nobody_holds, lookup) == {}
    assert asked == []
