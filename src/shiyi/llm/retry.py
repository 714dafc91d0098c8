"""Retry policy for model calls: exponential backoff with full jitter and Retry-After.

The policy only decides *how long* to wait and *how often* to try; which failures are
transient is the provider's business.  ``sleep`` and ``random`` are injectable so tests run
instantly and deterministically.
"""

from __future__ import annotations

import asyncio
import random as _random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shiyi.config.settings import ModelSettings

Sleep = Callable[[float], Awaitable[None]]

RETRY_AFTER_CAP = 120.0
"""Longest wait a server may ask for. Beyond that a CLI user would think we hung."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts to make and how long to wait between them."""

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    retry_after_cap: float = RETRY_AFTER_CAP
    sleep: Sleep = field(default=asyncio.sleep, compare=False)
    random: Callable[[], float] = field(default=_random.random, compare=False)

    @classmethod
    def from_settings(
        cls,
        settings: ModelSettings,
        *,
        sleep: Sleep = asyncio.sleep,
        random: Callable[[], float] = _random.random,
    ) -> RetryPolicy:
        return cls(
            max_attempts=1 + settings.max_retries,
            base_delay=settings.retry_base_delay,
            max_delay=settings.retry_max_delay,
            sleep=sleep,
            random=random,
        )

    def backoff(self, failed_attempts: int) -> float:
        """Full jitter: uniform in ``[0, min(max_delay, base * 2**(n-1))]``.

        Full jitter (rather than a fixed exponential) spreads clients that failed together
        so they do not hammer a recovering server in lockstep.
        """
        exponent = max(0, failed_attempts - 1)
        ceiling = min(self.max_delay, self.base_delay * 2.0**exponent)
        return self.random() * ceiling

    def delay(self, failed_attempts: int, retry_after: float | None = None) -> float:
        """Seconds to wait after ``failed_attempts`` failures.

        A server-sent Retry-After wins over our own backoff, even when it exceeds
        ``max_delay`` (retrying earlier would just be refused again), but it is capped at
        ``retry_after_cap`` so a bogus header cannot stall the user for hours.
        """
        if retry_after is not None:
            return min(max(0.0, retry_after), self.retry_after_cap)
        return self.backoff(failed_attempts)

    def can_retry(self, attempts_made: int) -> bool:
        return attempts_made < self.max_attempts

    async def wait(self, failed_attempts: int, retry_after: float | None = None) -> float:
        """Sleep before the next attempt; returns the delay for logging."""
        seconds = self.delay(failed_attempts, retry_after)
        await self.sleep(seconds)
        return seconds


def retry_after_seconds(
    headers: Mapping[str, str] | None, *, now: Callable[[], float] = time.time
) -> float | None:
    """Read ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date) from headers.

    ``retry-after-ms`` (sent by OpenAI and Azure) is preferred because it is more precise.
    Returns ``None`` when no usable hint is present.
    """
    if not headers:
        return None
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _parse_number(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _parse_number(raw)
    if seconds is not None:
        return seconds
    return _parse_http_date(raw, now())


def _parse_number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    if value != value or value < 0:  # NaN or negative: not a usable hint
        return None
    return value


def _parse_http_date(raw: str, now: float) -> float | None:
    try:
        when = parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    # A date in the past means "now": retry without waiting.
    return max(0.0, when.timestamp() - now)
