"""How a run stops early: the signal every early stop raises, and the cancellation that can
interrupt whatever the run awaits.

A run stops early on a cancel, a usage limit, a reply past its time or a model stuck repeating
itself; each raises :class:`_Stop` with the run's status, which
:meth:`~shiyi.agent.loop.RunLoop.events` turns into the run's end.  A cancel must reach a run
wherever it waits (the model's stream, a batch of tools), so :meth:`Cancellation.relay`
iterates each source in a task of its own that :meth:`Cancellation.cancel` cancels.

The signals are private: only the run loop's modules (:mod:`shiyi.agent.loop`,
:mod:`shiyi.agent.tool_turn`) raise and catch them, no caller ever meets one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import TypeVar

from shiyi.events import RunStatus

T = TypeVar("T")


class _Stop(Exception):
    """Ends the run early with a status (internal control flow)."""

    def __init__(self, status: RunStatus, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class _Cancelled:
    """Sentinel a relay puts in its queue when its task was cancelled."""


class _OutOfTime(Exception):
    """A relay's source sent nothing more before its deadline."""


@dataclass(slots=True)
class _Done:
    pass


class Cancellation:
    """Why a run was cancelled (None: it was not) and the task it awaits now."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self._current: asyncio.Task[None] | None = None

    def cancel(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        if self._current is not None and not self._current.done():
            self._current.cancel()

    def check(self) -> None:
        """Stop the run if it was cancelled."""
        if self.reason is not None:
            raise _Stop("cancelled", self.reason)

    async def relay(
        self, source: AsyncIterator[T], seconds: float | None = None
    ) -> AsyncGenerator[T, None]:
        """Iterate ``source`` in its own task so :meth:`cancel` can interrupt any await;
        past ``seconds`` raise :class:`_OutOfTime` (the source's task is cancelled)."""
        queue: asyncio.Queue[T | _Cancelled | _Done | BaseException] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for item in source:
                    queue.put_nowait(item)
                queue.put_nowait(_Done())
            except asyncio.CancelledError:
                queue.put_nowait(_Cancelled())
                raise
            except BaseException as exc:
                queue.put_nowait(exc)

        task = asyncio.create_task(pump())
        # A task cancelled before it first runs never enters pump's ``except``: without this
        # callback nothing reaches the queue and the consumer waits forever (a cancel that
        # arrived right after a model turn started hung the HTTP stream).
        task.add_done_callback(lambda t: queue.put_nowait(_Cancelled()) if t.cancelled() else None)
        self._current = task
        if self.reason is not None:
            task.cancel()
        deadline = None if seconds is None else time.monotonic() + seconds
        try:
            while True:
                item = await _next(queue, deadline)
                if isinstance(item, _Done):
                    return
                if isinstance(item, _Cancelled):
                    raise _Stop("cancelled", self.reason or "cancelled")
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self._current = None
            if not task.done():
                task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def _next(queue: asyncio.Queue[T], deadline: float | None) -> T:
    if deadline is None:
        return await queue.get()
    try:
        return await asyncio.wait_for(queue.get(), max(deadline - time.monotonic(), 0.0))
    except TimeoutError:
        raise _OutOfTime from None
