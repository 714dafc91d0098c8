"""The query moved towards its best runs (:mod:`shiyi.memory.recall.feedback`)."""

from __future__ import annotations

import pytest

from shiyi.memory.models import EventRecord
from shiyi.memory.recall.feedback import FEEDBACK_MIX, best_runs, moved_query


def turn(key: str, run: str) -> EventRecord:
    return EventRecord(key, "s1", run, 0.0, "user", "text", "user_message", 0)


def test_the_best_runs_are_those_of_the_best_turns() -> None:
    events = {k: turn(k, run) for k, run in
              [("a1", "a"), ("a2", "a"), ("b1", "b"), ("c1", "c"), ("d1", "d")]}  # fmt: skip
    scores = {"a1": 0.1, "a2": 2.0, "b1": 1.5, "c1": 3.0}  # d1 is no candidate
    assert best_runs(scores, events, 2) == ["c", "a"]
    assert best_runs(scores, events, 9) == ["c", "a", "b"]


def test_the_query_moves_towards_the_centroid_by_the_mix() -> None:
    moved = moved_query([3.0, 0.0], [0.0, 1.0])
    assert moved == pytest.approx([1.0, FEEDBACK_MIX])  # the query made unit length first
    assert moved_query([3.0, 4.0], []) == pytest.approx([0.6, 0.8])
