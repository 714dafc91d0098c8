"""Waiting for a live server's own memory worker (a test thread draining the same queue
would race it: a job the server's thread holds counts as still pending)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(probe: Callable[[], T], *, timeout: float = 60.0, every: float = 0.1) -> T:
    """``probe()`` once it returns something truthy; AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"not true within {timeout} s: {probe}"
        time.sleep(every)
