"""What a model call cost, from per-million-token prices in the settings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shiyi.config.settings import ModelPrice

_PER = 1_000_000


def price_for(model_name: str, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of ``model_name``: its exact entry, else the longest matching prefix.

    Prefixes let one entry such as ``gpt-4o`` cover dated snapshots like
    ``gpt-4o-2024-08-06``; the longest wins so ``gpt-4o-mini`` is not priced as ``gpt-4o``.
    """
    if model_name in prices:
        return prices[model_name]
    matches = [key for key in prices if key and model_name.startswith(key)]
    if not matches:
        return None
    return prices[max(matches, key=len)]


def cost_of(
    prompt_tokens: int,
    completion_tokens: int,
    model_name: str,
    prices: Mapping[str, ModelPrice],
) -> float | None:
    """USD for one call, or ``None`` when no price is known for the model."""
    price = price_for(model_name, prices)
    if price is None:
        return None
    return (prompt_tokens * price.input + completion_tokens * price.output) / _PER
