from __future__ import annotations

import time

import pytest

from shiyi.agent.complexity import (
    PLAN_GUIDANCE,
    Assessment,
    ComplexityDetector,
    guidance_for,
)
from shiyi.config.settings import ComplexitySettings
from shiyi.errors import ConfigError


@pytest.fixture
def detector() -> ComplexityDetector:
    return ComplexityDetector(ComplexitySettings())


@pytest.mark.parametrize("message", ["你好", "what time is it?", "今天天气怎么样？", "thanks!"])
def test_simple_messages_are_not_complex(detector: ComplexityDetector, message: str) -> None:
    assessment = detector.assess(message)
    assert assessment == Assessment(complex=False, reasons=[])
    assert guidance_for(assessment) == ""


@pytest.mark.parametrize(
    ("message", "pattern"),
    [
        ("先看看日志，再改配置，然后重启", "先.*再.*然后"),
        ("帮我重构一下这个模块", "重构"),
        ("把数据库迁移到新版本", "迁移"),
        ("Please REFACTOR the parser", r"\brefactor"),
        ("first check the logs, then fix it", r"\bfirst\b.*\bthen\b"),
        ("First check the logs.\nThen fix it.", r"\bfirst\b.*\bthen\b"),
        ("explain it step by step", r"\bstep[- ]by[- ]step\b"),
    ],
)
def test_step_keywords(detector: ComplexityDetector, message: str, pattern: str) -> None:
    assessment = detector.assess(message)
    assert assessment.complex
    assert assessment.reasons == [f"step keyword '{pattern}'"]
    assert guidance_for(assessment) == PLAN_GUIDANCE


def test_step_keyword_needs_the_whole_sequence(detector: ComplexityDetector) -> None:
    assert not detector.assess("先吃饭").complex


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("搜索一下这个错误然后运行看看", "tools from 2 domains: search, shell"),
        ("read the file and run the tests", "tools from 2 domains: file, shell"),
    ],
)
def test_domains_at_the_threshold(detector: ComplexityDetector, message: str, reason: str) -> None:
    assert detector.assess(message).reasons == [reason]


@pytest.mark.parametrize("message", ["搜索一下天气", "run it", "read this"])
def test_one_domain_is_not_enough(detector: ComplexityDetector, message: str) -> None:
    assert not detector.assess(message).complex


def test_english_keywords_must_start_a_word(detector: ComplexityDetector) -> None:
    # "already" holds "read", "brunch" holds "run": neither is a tool intent.
    assert not detector.assess("I already had brunch").complex


def test_threshold_is_configurable() -> None:
    detector = ComplexityDetector(ComplexitySettings(multi_tool_threshold=1))
    assert detector.assess("run it").reasons == ["tools from 1 domains: shell"]


@pytest.mark.parametrize("unit", ["好", "a"])
def test_length_counts_characters(detector: ComplexityDetector, unit: str) -> None:
    assert not detector.assess(unit * 80).complex
    assert detector.assess(unit * 81).reasons == ["message longer than 80 characters"]


def test_length_ignores_surrounding_whitespace(detector: ComplexityDetector) -> None:
    assert not detector.assess("  " + "好" * 80 + "\n\n").complex


@pytest.mark.parametrize(
    ("previous", "marker"),
    [
        ("我们先看配置。下一步我会检查日志。", "下一步"),
        ("接下来需要你确认密码。", "接下来"),
        ("Done. The Next Step is to deploy.", "next step"),
    ],
)
def test_continuation_markers(detector: ComplexityDetector, previous: str, marker: str) -> None:
    assert detector.assess("好的", previous).reasons == [f"previous reply said '{marker}'"]


def test_previous_reply_without_marker(detector: ComplexityDetector) -> None:
    assert not detector.assess("ok", "All done.").complex
    assert not detector.assess("ok", None).complex


def test_all_reasons_are_listed(detector: ComplexityDetector) -> None:
    message = "先搜索资料，再读取代码，然后重构" + "。" * 80
    reasons = detector.assess(message, "下一步").reasons
    assert reasons == [
        "step keyword '先.*再.*然后'",
        "tools from 2 domains: search, file",
        "message longer than 80 characters",
        "previous reply said '下一步'",
    ]


def test_disabled_is_never_complex() -> None:
    detector = ComplexityDetector(ComplexitySettings(enabled=False))
    assert not detector.assess("先重构，再迁移，然后运行测试" * 20, "下一步").complex


@pytest.mark.parametrize("bad", ["(unclosed", "*x", ""])
def test_invalid_step_keyword_names_the_setting(bad: str) -> None:
    settings = ComplexitySettings(step_keywords=["ok", bad])
    with pytest.raises(ConfigError, match=r"complexity\.step_keywords\[1\]"):
        ComplexityDetector(settings)


def test_invalid_regex_error_includes_the_regex_error() -> None:
    with pytest.raises(ConfigError, match="missing \\), unterminated subpattern"):
        ComplexityDetector(ComplexitySettings(step_keywords=["(unclosed"]))


def test_domain_keywords_are_literal_text() -> None:
    settings = ComplexitySettings(multi_tool_domains={"a": ["c++"], "b": ["(x"]})
    assert ComplexityDetector(settings).assess("c++ (x").complex


def test_fast(detector: ComplexityDetector) -> None:
    messages = ["你好", "read the file and run the tests", "先搜索，再读取代码，然后运行" * 3]
    rounds = 2000
    start = time.perf_counter()
    for _ in range(rounds):
        for message in messages:
            detector.assess(message, "All done, anything else?")
    per_message = (time.perf_counter() - start) / (rounds * len(messages))
    assert per_message < 0.2e-3


def test_pathological_paste_stays_fast(detector: ComplexityDetector) -> None:
    # Backtracking in "先.*再.*然后" would take seconds on this without the scan window.
    paste = "先" * 3000 + "再" * 3000
    start = time.perf_counter()
    assert detector.assess(paste).complex
    assert time.perf_counter() - start < 0.1
