"""Who may use a model endpoint now: the conversation first, background work after it.

A llama.cpp server computes one reply at a time, and llama-cpp-python interrupts a request
when another one arrives: memory extraction sent while a reply streamed cut the reply off.
So every request to an endpoint passes its :class:`EndpointGate`:

- at most ``limit`` requests are in flight (``models.<role>.max_concurrency``; 1 for local
  and unknown servers, which run one slot);
- a run holds the gate of its model's endpoint from its start to its end
  (:func:`conversation`), which reserves a slot for it: background work (extraction,
  summaries, rewriting) takes a slot only when one is left after the reserved ones (on a
  one-slot server: only when no run is active and none waits), and a background stream that
  a new run needs the slot of stops (:meth:`EndpointGate.must_yield`), to be retried later.

Gates are per process and keyed by the endpoint URL, so the ``main`` and ``fast`` roles on
one server share one.  Thread-safe: the memory worker calls from its own thread and loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

HOSTED_LIMIT = 8
"""Default for known hosted APIs, which serve many requests at once."""
HOSTED = ("api.openai.com", "api.deepseek.com", "openrouter.ai", "api.groq.com",
          "api.together.xyz", "api.mistral.ai", "api.fireworks.ai")  # fmt: skip
POLL = 0.01
"""Seconds between tries of a conversation request waiting for a slot."""


def default_limit(endpoint: str) -> int:
    host = urlsplit(endpoint).hostname or ""
    return HOSTED_LIMIT if host in HOSTED else 1


class EndpointGate:
    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self._lock = threading.Lock()
        self._runs = 0
        self._waiting = 0
        self._in_flight = 0

    def must_yield(self, limit: int) -> bool:
        """A background request in flight holds a slot a run or a waiting request needs."""
        with self._lock:
            return self._in_flight + self._runs + self._waiting > limit

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    def run_started(self) -> None:
        with self._lock:
            self._runs += 1

    def run_ended(self) -> None:
        with self._lock:
            self._runs = max(0, self._runs - 1)

    async def enter_conversation(self, limit: int) -> None:
        """Wait for a slot, ahead of any background request."""
        with self._lock:
            self._waiting += 1
        try:
            # Polled: the gate is shared by threads with their own event loops, and an
            # asyncio.Event belongs to one loop.
            while not self._take(limit, background=False):  # noqa: ASYNC110
                await asyncio.sleep(POLL)
        finally:
            with self._lock:
                self._waiting -= 1

    def try_enter_background(self, limit: int) -> bool:
        """Take a slot now if one is left after those reserved for runs and waiting
        conversation requests."""
        return self._take(limit, background=True)

    def leave(self) -> None:
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)

    def _take(self, limit: int, *, background: bool) -> bool:
        with self._lock:
            reserved = self._runs + self._waiting if background else 0
            if self._in_flight + reserved >= limit:
                return False
            self._in_flight += 1
            return True


_GATES: dict[str, EndpointGate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(endpoint: str) -> EndpointGate:
    with _GATES_LOCK:
        gate = _GATES.get(endpoint)
        if gate is None:
            gate = _GATES[endpoint] = EndpointGate(endpoint)
        return gate


_conversations = 0
_last_ended = float("-inf")


def conversations_in_progress() -> int:
    """Runs of this process in progress, whatever their model (background CPU work such as
    embedding waits for them when the replies are computed on this machine)."""
    with _GATES_LOCK:
        return _conversations


def since_last_conversation() -> float:
    """Seconds since a run of this process last ended (infinite if none has)."""
    with _GATES_LOCK:
        return time.monotonic() - _last_ended


@contextmanager
def conversation(model: object) -> Iterator[None]:
    """Hold ``model``'s endpoint for a run (a model without one, e.g. the embedded or the
    scripted model, has no gate) and count the run as in progress."""
    global _conversations, _last_ended
    endpoint = getattr(model, "endpoint", None)
    gate = gate_for(endpoint) if isinstance(endpoint, str) else None
    with _GATES_LOCK:
        _conversations += 1
    if gate is not None:
        gate.run_started()
    try:
        yield
    finally:
        if gate is not None:
            gate.run_ended()
        with _GATES_LOCK:
            _conversations -= 1
            _last_ended = time.monotonic()
