"""A question's words spread over one day's conversation: that day's turns come before a turn
of another day matching one of its words well.  Both backends, the real embedding model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.config import load_settings
from shiyi.memory.models import EventRecord
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.records import seed

DAY = 86_400
# (day, speaker, text): the wedding cake is told over a day in three turns; another day has a
# cake of its own, said in the words a question about cakes uses.
TURNS = [
    (0, "maya", "My sister is getting married in June, the wedding is in Porto."),
    (0, "leo", "Porto in June sounds lovely! Are you helping with anything?"),
    (0, "maya", "I'm in charge of dessert: three tiers of lemon sponge with elderflower."),
    (0, "leo", "An elderflower cake? That sounds delicious, send me a photo."),
    (8, "leo", "I baked a cake yesterday, a chocolate cake for my birthday."),
    (8, "maya", "Happy birthday! Did it rise properly?"),
    (15, "maya", "Work has been hectic, two deadlines this week."),
    (15, "leo", "Hang in there, the weekend is close."),
]
EVIDENCE = "turn-2"
DISTRACTOR = "turn-4"
QUESTION = "What cake is being made for the wedding?"


def events() -> list[EventRecord]:
    return [
        EventRecord(
            id=f"turn-{index}",
            session_id="friends",
            run_id=f"friends-day-{day}",
            ts=1_700_000_000 + day * DAY + index * 600,
            role=role,
            content=text,
            segment_type="imported",
            iteration=index,
        )
        for index, (day, role, text) in enumerate(TURNS)
    ]


@pytest.fixture
def memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.memory.store = memory_store
    settings.memory.lead_in = False  # the contrast shows coverage, which a lead-in blurs
    settings.memory.lifecycle.extraction = False
    opened = Memory.open(settings, start_worker=False)
    seed(opened, events())
    yield opened
    opened.close()


def without_coverage(memory: Memory) -> Retriever:
    base = memory.retriever
    boosts = replace(base.boosts, coverage=False)
    return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=boosts)


def ranked(retriever: Retriever) -> list[str]:
    return [hit.id for hit in retriever.search(QUESTION, limit=8, touch=False)]


def test_the_day_that_tells_the_whole_story_comes_first(memory: Memory) -> None:
    order = ranked(memory.retriever)
    assert order.index(EVIDENCE) < order.index(DISTRACTOR)


def test_without_coverage_the_other_days_cake_comes_first(memory: Memory) -> None:
    order = ranked(without_coverage(memory))
    assert order.index(DISTRACTOR) < order.index(EVIDENCE), "the fixture no longer tells apart"
