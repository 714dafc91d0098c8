from __future__ import annotations

import time

import pytest

from shiyi.llm.tokens import MESSAGE_OVERHEAD, REPLY_PRIMING, TokenCounter, heuristic_count
from shiyi.llm.types import Message, ToolCall


@pytest.fixture
def counter() -> TokenCounter:
    return TokenCounter()


def test_known_cl100k_counts(counter: TokenCounter) -> None:
    assert counter.backend == "cl100k_base"
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    assert counter.count("你好世界") == 5


def test_special_token_text_is_counted_not_rejected(counter: TokenCounter) -> None:
    assert counter.count("a <|endoftext|> b") > 3


def test_heuristic_fallback() -> None:
    counter = TokenCounter(use_tokenizer=False)
    assert counter.backend == "heuristic"
    assert counter.count("abcdefgh") == 2
    assert counter.count("你好世界") == 4
    assert heuristic_count("ab你好") == 3


def test_message_includes_overhead_and_tool_calls(counter: TokenCounter) -> None:
    plain = Message("assistant", "hello world")
    assert counter.count_message(plain) == MESSAGE_OVERHEAD + 2
    call = ToolCall("c1", "read_file", '{"path": "a.txt"}')
    with_call = Message("assistant", "hello world", tool_calls=(call,))
    assert counter.count_message(with_call) > counter.count_message(plain) + 5
    assert counter.count_messages([plain, plain]) == 2 * (MESSAGE_OVERHEAD + 2) + REPLY_PRIMING


def test_cache_hits_on_repeated_texts(counter: TokenCounter) -> None:
    counter.count("the same text")
    counter.count("the same text")
    assert counter.misses == 1
    assert counter.hits == 1


def test_cache_is_bounded() -> None:
    counter = TokenCounter(cache_size=2)
    for text in ("a", "b", "c", "a"):
        counter.count(text)
    assert counter.misses == 4


def test_calibration_first_sample_then_ema(counter: TokenCounter) -> None:
    assert counter.ratio == 1.0
    assert counter.calibrate(100, 120) == pytest.approx(1.2)
    assert counter.calibrate(100, 100) == pytest.approx(0.7 * 1.2 + 0.3 * 1.0)
    raw = counter.count_messages([Message("user", "hello world")], calibrated=False)
    assert counter.count_messages([Message("user", "hello world")]) >= raw


def test_calibration_is_clamped_and_ignores_nonsense(counter: TokenCounter) -> None:
    assert counter.calibrate(100, 1000) == 2.0
    assert counter.calibrate(0, 50) == 2.0
    for _ in range(50):
        counter.calibrate(100, 1)
    assert counter.ratio == pytest.approx(0.5, abs=1e-3)


def test_recounting_a_long_history_is_cheap(counter: TokenCounter) -> None:
    history = [
        Message("user" if i % 2 else "assistant", f"message {i}: " + "some prose text " * 60)
        for i in range(300)
    ]
    start = time.perf_counter()
    first = counter.count_messages(history)
    uncached = time.perf_counter() - start
    start = time.perf_counter()
    second = counter.count_messages(history)
    cached = time.perf_counter() - start
    assert first == second
    assert cached < uncached
