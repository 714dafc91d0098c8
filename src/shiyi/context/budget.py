"""How the context window is shared between the fixed parts, summaries and raw history."""

from __future__ import annotations

from dataclasses import dataclass

from shiyi.config.settings import ContextSettings
from shiyi.errors import ConfigError

MIN_AVAILABLE_TOKENS = 256
"""Below this not even one exchange fits next to the system prompt; refuse the config."""


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """Token shares of one model's context window.

    ``available`` is what is left after the system prompt, the memory prefetch hint and the
    reserve for the reply; ``summary`` is the share of it for block summaries and the digest,
    ``history`` the rest, for raw messages.
    """

    context_window: int
    system: int
    prefetch: int
    reply_reserve: int
    summary: int
    history: int
    trim_threshold: float = 0.60
    summarize_threshold: float = 0.75
    digest_threshold: float = 0.90

    @classmethod
    def from_settings(cls, context_window: int, settings: ContextSettings) -> TokenBudget:
        fixed = settings.system_tokens + settings.prefetch_tokens + settings.reply_reserve_tokens
        available = context_window - fixed
        if available < MIN_AVAILABLE_TOKENS:
            raise ConfigError(
                f"context window of {context_window} tokens is too small: system "
                f"({settings.system_tokens}) + prefetch ({settings.prefetch_tokens}) + reply "
                f"reserve ({settings.reply_reserve_tokens}) leave {available} tokens, and at "
                f"least {MIN_AVAILABLE_TOKENS} are needed for the conversation; raise the "
                "model's context_window or lower [context] system_tokens/prefetch_tokens/"
                "reply_reserve_tokens"
            )
        _check_thresholds(settings)
        summary = int(settings.summary_share * available)
        return cls(
            context_window=context_window,
            system=settings.system_tokens,
            prefetch=settings.prefetch_tokens,
            reply_reserve=settings.reply_reserve_tokens,
            summary=summary,
            history=available - summary,
            trim_threshold=settings.trim_threshold,
            summarize_threshold=settings.summarize_threshold,
            digest_threshold=settings.digest_threshold,
        )

    @property
    def available(self) -> int:
        """Tokens for history and summaries together."""
        return self.summary + self.history

    def fraction(self, used_tokens: int) -> float:
        """Share of :attr:`available` that ``used_tokens`` of raw history would take."""
        return used_tokens / self.available

    def level(self, used_tokens: int) -> int:
        """Compression level for a raw history of ``used_tokens``.

        0 nothing, 1 trim old tool outputs, 2 summarise old blocks, 3 digest plus tail.
        Measured against the whole history+summary budget so that a history which still
        fits raw is left alone until it crowds out the room summaries would need.
        """
        fraction = self.fraction(used_tokens)
        if fraction >= self.digest_threshold:
            return 3
        if fraction >= self.summarize_threshold:
            return 2
        if fraction >= self.trim_threshold:
            return 1
        return 0


def _check_thresholds(settings: ContextSettings) -> None:
    levels = (settings.trim_threshold, settings.summarize_threshold, settings.digest_threshold)
    if not levels[0] <= levels[1] <= levels[2]:
        raise ConfigError(
            "[context] thresholds must grow: trim_threshold <= summarize_threshold <= "
            f"digest_threshold (got {levels[0]}, {levels[1]}, {levels[2]})"
        )
