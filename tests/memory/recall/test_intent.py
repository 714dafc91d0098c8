"""Message intent by rules (seed 001 section 3.3): each intent in English and Chinese."""

from __future__ import annotations

import time

import pytest

from shiyi.memory.recall.intent import detect_intent

PEERS = ["reviewer", "ops-bot"]


@pytest.mark.parametrize(
    ("message", "previous", "kind"),
    [
        ("Implement a CSV export for the reports page", [], "new_task"),
        ("给报表页面实现一个 CSV 导出功能", [], "new_task"),
        ("What is the capital of Peru?", [], "new_task"),
        ("also add a header row", ["Write the CSV export"], "follow_up"),
        ("还有表头也要加上", ["写一个 CSV 导出"], "follow_up"),
        ("why that order?", ["The columns are sorted by date"], "follow_up"),
        ("the csv export header row", ["csv export: add the header row"], "follow_up"),
        ("Traceback (most recent call last):\n  File x.py\nKeyError: 'id'", [], "bug_fix"),
        ("The export crashes on empty reports", [], "bug_fix"),
        ("导出的时候报错了，帮我修复一下", [], "bug_fix"),
        ("also, it fails now with ValueError", ["Write the CSV export"], "bug_fix"),
        ("I prefer semicolons as the CSV separator", [], "preference"),
        ("Don't use pandas for this kind of thing", [], "preference"),
        ("我喜欢用分号做 CSV 分隔符", [], "preference"),
        ("以后不要用 pandas", [], "preference"),
        ("Ask reviewer to look at the export", [], "cross_agent"),
        ("让 ops-bot 部署一下导出服务", [], "cross_agent"),
        ("hand this off to another agent", [], "cross_agent"),
        ("交给其他 agent 去做", [], "cross_agent"),
    ],
)
def test_each_intent_is_found_in_english_and_chinese(
    message: str, previous: list[str], kind: str
) -> None:
    assert detect_intent(message, previous=previous, agents=PEERS).kind == kind


def test_the_named_agent_comes_with_the_cross_agent_intent() -> None:
    intent = detect_intent("ask Reviewer about it", agents=PEERS)
    assert (intent.kind, intent.agent) == ("cross_agent", "reviewer")
    assert detect_intent("the reviewers liked it", agents=PEERS).kind != "cross_agent"


def test_a_follow_up_needs_turns_to_follow() -> None:
    assert detect_intent("also add a header row").kind == "new_task"
    assert detect_intent("also add a header row", previous=["hi"]).kind == "follow_up"


def test_a_strong_cue_is_surer_than_the_default() -> None:
    assert detect_intent("KeyError: 'id'").confidence > detect_intent("hello").confidence


def test_detection_takes_well_under_a_millisecond() -> None:
    pasted = "Traceback (most recent call last):\n" + "  File 'a.py', line 1\n" * 500
    started = time.perf_counter()
    for _ in range(200):
        detect_intent(pasted, previous=["x " * 500, "y " * 500], agents=PEERS)
        detect_intent("我喜欢用分号做 CSV 分隔符", previous=["写一个 CSV 导出"], agents=PEERS)
    assert (time.perf_counter() - started) / 400 < 0.001
