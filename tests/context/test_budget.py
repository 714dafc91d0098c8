from __future__ import annotations

import pytest

from shiyi.config.settings import ContextSettings
from shiyi.context.budget import TokenBudget
from shiyi.errors import ConfigError


def test_budget_arithmetic() -> None:
    settings = ContextSettings(
        system_tokens=500, prefetch_tokens=200, reply_reserve_tokens=1024, summary_share=0.15
    )
    budget = TokenBudget.from_settings(32_000, settings)
    assert budget.available == 32_000 - 500 - 200 - 1024 == 30_276
    assert budget.summary == int(0.15 * 30_276)
    assert budget.history == 30_276 - budget.summary
    assert budget.system + budget.prefetch + budget.reply_reserve + budget.available == 32_000


@pytest.mark.parametrize(
    ("fraction", "level"),
    [(0.0, 0), (0.59, 0), (0.60, 1), (0.74, 1), (0.75, 2), (0.89, 2), (0.90, 3), (1.5, 3)],
)
def test_levels_follow_thresholds(fraction: float, level: int) -> None:
    budget = TokenBudget.from_settings(11_724, ContextSettings())
    assert budget.available == 10_000
    assert budget.level(round(fraction * 10_000)) == level


def test_window_too_small_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="too small"):
        TokenBudget.from_settings(1500, ContextSettings())


def test_thresholds_must_grow() -> None:
    settings = ContextSettings(trim_threshold=0.8, summarize_threshold=0.7)
    with pytest.raises(ConfigError, match="thresholds"):
        TokenBudget.from_settings(32_000, settings)
