"""The belief benchmark's own parts: the rule-based reader and extraction double it feeds
shiyi with, and the scoring it reports (``bench/beliefs_bench.py`` runs them at scale)."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime

import pytest
from bench.beliefs_data import ATTRIBUTES
from bench.beliefs_metrics import (
    Belief,
    Truth,
    Written,
    last_write_wins,
    score,
    true_slot,
)
from bench.beliefs_model import (
    ExtractionDouble,
    Statement,
    parse_window,
    read_statements,
)

from shiyi.memory.lifecycle.extraction import WindowMessage, extract, render_window

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC).timestamp()


def said(text: str, role: str = "user") -> list[tuple[str, str, str, bool]]:
    return [(s.subject, s.attribute, s.value, s.hedged) for s in read_statements(text, role, T0)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("By the way, I moved to Lisbon last month.", ("user", "residence", "Lisbon", False)),
        ("Oh, and I live in New York now.", ("user", "residence", "New York", False)),
        ("I got a new job at Acme Foods.", ("user", "employer", "Acme Foods", False)),
        ("These days I'm a nurse, full time.", ("user", "occupation", "nurse", False)),
        ("Maybe my favourite food is pho now.", ("user", "favourite food", "pho", True)),
        ("My budget is $400 per month.", ("user", "budget", "$400", False)),
        ("I think I weigh 82kg, the scale is odd.", ("user", "weight", "82kg", True)),
        ("I'm planning a trip to Peru in the spring.", ("user", "trip destination", "Peru", False)),
        ("I just got engaged!", ("user", "relationship status", "engaged", False)),
    ],
)
def test_the_reader_finds_one_statement_of_a_changing_attribute(
    text: str, expected: tuple[str, str, str, bool]
) -> None:
    assert said(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "Do you live in Paris?",  # a question states nothing
        "If I moved to Berlin, what would change?",  # nor does a condition
        "I don't live in Berlin.",
        "I live in a small flat.",  # not a place name
        "My sister lives in Rome.",  # not the speaker
        "I'm a bit tired today.",
    ],
)
def test_the_reader_leaves_what_is_no_statement(text: str) -> None:
    assert said(text) == []


def test_a_named_speaker_is_the_subject_and_the_assistant_states_nothing() -> None:
    assert said("I moved to Osaka.", "caroline") == [("Caroline", "residence", "Osaka", False)]
    assert said("You told me you moved to Osaka.", "assistant") == []


def test_the_window_shiyi_renders_is_read_back_line_by_line() -> None:
    messages = [
        WindowMessage("user", "I live in Porto.\nIt rains a lot.", T0),
        WindowMessage("assistant", "Noted.", T0 + 60),
        WindowMessage("user", "Now I live in Seoul.", T0 + 120),
    ]
    lines = parse_window(render_window(messages, ["porto"]))
    assert [(line.role, line.text, line.ts) for line in lines] == [
        ("user", "I live in Porto.\nIt rains a lot.", T0),
        ("assistant", "Noted.", T0 + 60),
        ("user", "Now I live in Seoul.", T0 + 120),
    ]


def window(*texts: str) -> str:
    return render_window([WindowMessage("user", t, T0 + 60 * i) for i, t in enumerate(texts)], [])


def test_the_double_answers_shiyis_extraction_call_with_the_newest_statement() -> None:
    double = ExtractionDouble(seed=3)
    text = window("I live in Porto.", "Maybe my favourite food is pho now.")
    extraction = asyncio.run(extract(double.model(), text))  # validated by shiyi's schema
    newest = [f for f in extraction.facts if f.value == "pho"]
    assert len(newest) == 1
    assert newest[0].confidence < 0.75  # a hedge is uncertain
    assert {f.value for f in extraction.facts} <= {"pho", "Porto"}


def test_the_double_varies_wording_and_about_but_the_same_window_the_same_way() -> None:
    text = window("I live in Porto.")
    first = [asyncio.run(extract(ExtractionDouble(s).model(), text)).facts[0] for s in range(40)]
    assert len({f.key for f in first}) > 2
    assert len({tuple(f.about) for f in first}) > 2
    again = asyncio.run(extract(ExtractionDouble(5).model(), text)).facts[0]
    assert (again.key, again.about) == (first[5].key, first[5].about)


def test_re_reports_come_from_older_lines_and_every_write_is_logged() -> None:
    double = ExtractionDouble(seed=1)
    facts = double.extraction(
        parse_window(window("I live in Porto.", "I work at Globex.")),
        random.Random(0),
        consolidating=True,
    )["facts"]
    assert facts
    assert len(double.written) == len(facts)
    assert {slot for slot, *_ in double.written} <= {("user", "residence"), ("user", "employer")}


def statement(value: str, minute: int, hedged: bool = False) -> Statement:
    return Statement("user", "residence", value, T0 + 60 * minute, hedged)


TRUTH = Truth.of([statement("Berlin", 0), statement("Paris", 5), statement("Rome", 7, hedged=True)])
SLOT = ("user", "residence")


def test_the_newest_plain_value_must_be_current() -> None:
    right = score(TRUTH, [Belief("a", SLOT, "paris", "active")], [])
    assert (right.slots, right.changed, right.current, right.stale_active) == (1, 1, 1, 0)
    both = score(
        TRUTH, [Belief("a", SLOT, "paris", "active"), Belief("b", SLOT, "berlin", "active")], []
    )
    assert (both.current, both.stale_active, both.live) == (0, 1, 2)


def test_an_older_statement_replacing_a_newer_one_is_a_stale_overwrite() -> None:
    berlin, paris = Belief("a", SLOT, "berlin", "active"), Belief("b", SLOT, "paris", "superseded")
    scores = score(TRUTH, [berlin, paris], [(berlin, paris)])
    assert (scores.current, scores.stale_overwrites) == (0, 1)
    assert score(TRUTH, [paris, berlin], [(paris, berlin)]).stale_overwrites == 0


def test_a_hedge_said_once_must_not_be_active_and_duplicates_are_counted() -> None:
    beliefs = [
        Belief("a", SLOT, "paris", "active"),
        Belief("b", SLOT, "paris", "active"),
        Belief("c", SLOT, "rome", "pending"),
    ]
    scores = score(TRUTH, beliefs, [])
    assert (scores.single_hedges, scores.hedges_promoted, scores.duplicates) == (1, 0, 1)
    promoted = score(TRUTH, [Belief("c", SLOT, "rome", "active")], [])
    assert promoted.hedges_promoted == 1


def test_last_write_wins_keeps_one_value_per_exact_key_and_about() -> None:
    written = [
        Written(SLOT, "Berlin", "lives_in", ("user",)),
        Written(SLOT, "Paris", "lives in", ("paris",)),  # another `about`: another entry
        Written(SLOT, "Paris", "lives_in", ("user",)),
    ]
    beliefs, overwrites = last_write_wins(written)
    assert sorted((b.value, b.status) for b in beliefs) == [
        ("berlin", "superseded"),
        ("paris", "active"),
        ("paris", "active"),
    ]
    assert [(new.value, old.value) for new, old in overwrites] == [("paris", "berlin")]
    by_slot, _ = last_write_wins(written, true_slot)
    assert [b.value for b in by_slot if b.status == "active"] == ["paris"]


def test_every_planted_sentence_is_read_back_as_its_attribute() -> None:
    for attribute in ATTRIBUTES:
        for value in attribute.values:
            for template in attribute.plain + attribute.hedged:
                text = template.format(v=value)
                found = read_statements(text, "user", T0)
                hedged = template in attribute.hedged
                assert [(s.attribute, s.hedged) for s in found] == [(attribute.name, hedged)], text
                assert found[0].value in (value, f"{value} car"), text  # "owns car": "Toyota car"
