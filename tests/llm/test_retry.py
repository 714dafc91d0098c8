from __future__ import annotations

from email.utils import formatdate

import pytest

from shiyi.config.settings import ModelSettings
from shiyi.llm.retry import RETRY_AFTER_CAP, RetryPolicy, retry_after_seconds


def test_backoff_doubles_up_to_max_delay_at_the_top_of_the_jitter_range() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0, random=lambda: 1.0)
    assert [policy.backoff(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_full_jitter_scales_the_whole_interval() -> None:
    assert RetryPolicy(base_delay=2.0, random=lambda: 0.0).backoff(3) == 0.0
    assert RetryPolicy(base_delay=2.0, random=lambda: 0.25).backoff(3) == 2.0  # 0.25 * 8


def test_real_jitter_stays_inside_the_interval() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0)
    delays = [policy.backoff(3) for _ in range(200)]
    assert all(0.0 <= d <= 4.0 for d in delays)
    assert len(set(delays)) > 1


def test_retry_after_wins_over_backoff_even_beyond_max_delay() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=2.0, random=lambda: 1.0)
    assert policy.delay(1, retry_after=0.0) == 0.0
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert policy.delay(1, retry_after=10_000.0) == RETRY_AFTER_CAP
    assert policy.delay(1, retry_after=None) == 0.5


def test_from_settings_counts_the_first_attempt() -> None:
    settings = ModelSettings(max_retries=2, retry_base_delay=0.1, retry_max_delay=5.0)
    policy = RetryPolicy.from_settings(settings)
    assert (policy.max_attempts, policy.base_delay, policy.max_delay) == (3, 0.1, 5.0)
    assert [policy.can_retry(n) for n in (1, 2, 3)] == [True, True, False]


def test_no_retries_means_one_attempt() -> None:
    policy = RetryPolicy.from_settings(ModelSettings(max_retries=0))
    assert not policy.can_retry(1)


async def test_wait_uses_the_injected_sleep() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    policy = RetryPolicy(base_delay=1.0, sleep=sleep, random=lambda: 0.5)
    assert await policy.wait(2) == 1.0
    assert await policy.wait(1, retry_after=4.0) == 4.0
    assert slept == [1.0, 4.0]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"RETRY-AFTER": " 0 "}, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-4"}, None),
        ({"Retry-After": "nan"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_header_forms(headers: dict[str, str] | None, expected: float | None) -> None:
    assert retry_after_seconds(headers) == expected


def test_retry_after_as_http_date() -> None:
    now = 1_700_000_000.0
    later = formatdate(now + 10, usegmt=True)
    earlier = formatdate(now - 60, usegmt=True)
    assert retry_after_seconds({"Retry-After": later}, now=lambda: now) == pytest.approx(10.0)
    assert retry_after_seconds({"Retry-After": earlier}, now=lambda: now) == 0.0
