from __future__ import annotations

import pytest

from shiyi.config.settings import ModelPrice
from shiyi.llm.openai.pricing import cost_of, price_for

PRICES = {
    "gpt-4o": ModelPrice(input=2.5, output=10.0),
    "gpt-4o-mini": ModelPrice(input=0.15, output=0.6),
    "deepseek-chat": ModelPrice(input=0.27, output=1.1),
    "deepseek": ModelPrice(input=9.0, output=9.0),
}


def test_cost_is_per_million_tokens() -> None:
    cost = cost_of(1_000_000, 500_000, "gpt-4o", PRICES)
    assert cost == pytest.approx(2.5 + 5.0)
    assert cost_of(2000, 1000, "deepseek-chat", PRICES) == pytest.approx((2000 * 0.27 + 1100) / 1e6)


def test_exact_name_beats_a_prefix() -> None:
    assert price_for("deepseek-chat", PRICES) == PRICES["deepseek-chat"]


def test_longest_prefix_wins_for_snapshots() -> None:
    assert price_for("gpt-4o-mini-2024-07-18", PRICES) == PRICES["gpt-4o-mini"]
    assert price_for("gpt-4o-2024-08-06", PRICES) == PRICES["gpt-4o"]
    assert price_for("deepseek-reasoner", PRICES) == PRICES["deepseek"]


def test_unknown_model_has_no_cost() -> None:
    assert cost_of(10, 10, "llama3", PRICES) is None
    assert cost_of(10, 10, "gpt-4o", {}) is None


def test_zero_tokens_cost_nothing() -> None:
    assert cost_of(0, 0, "gpt-4o", PRICES) == 0.0
