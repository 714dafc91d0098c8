"""Reading an OpenAI-compatible chat stream as the server sent it, line by line.

The SDK's stream iterator hides two things shiyi must see:

- keep-alive comments (``: ping``): a server that only pings keeps every read alive, so the
  per-read timeout never fires; here a stream that sends no data for ``idle`` seconds fails;
- the ``[DONE]`` sentinel: a stream that stops without it and without a finish reason was
  cut off, not finished (:class:`StreamState` records which it was).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any


class _StreamIdle(Exception):
    """No data event arrived for the idle limit (only keep-alives, or a stalled server)."""

    def __init__(self, idle: float, pings: int) -> None:
        super().__init__(
            f"no data for {idle:g}s" + (f" ({pings} keep-alive pings)" if pings else "")
        )
        self.idle = idle
        self.pings = pings


class _StreamGarbled(Exception):
    """A ``data:`` line that is not JSON."""


class _StreamErrorEvent(Exception):
    """The server sent ``{"error": ...}`` inside the stream: it gave up mid-reply."""


@dataclass(slots=True)
class StreamState:
    done: bool = False
    """The server sent ``[DONE]``."""
    data_events: int = 0
    pings: int = 0


async def data_events(
    lines: AsyncIterator[str],
    state: StreamState,
    *,
    idle: float,
    clock: Callable[[], float] = time.monotonic,
) -> AsyncIterator[dict[str, Any]]:
    """The JSON payload of each ``data:`` line until ``[DONE]`` (recorded in ``state``).

    Raises :class:`_StreamIdle` when a line arrives ``idle`` seconds or more after the last
    data (a silent server is the HTTP client's read timeout's job).
    """
    last_data = clock()
    async for line in lines:
        if not line.startswith("data:"):
            state.pings += line.startswith(":")
            if clock() - last_data >= idle:
                raise _StreamIdle(idle, state.pings)
            continue  # blank separators, comments, ``event:``/``id:`` fields
        text = line[5:].strip()
        if text == "[DONE]":
            state.done = True
            return
        last_data = clock()
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _StreamGarbled(
                f"the server sent a line that is not JSON: {text[:200]!r}"
            ) from exc
        if isinstance(payload, dict) and payload.get("error"):
            raise _StreamErrorEvent(_error_text(payload["error"]))
        state.data_events += 1
        if isinstance(payload, dict):
            yield payload


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)
