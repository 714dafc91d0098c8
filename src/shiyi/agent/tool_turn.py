"""A run's tool turns: the calls of one model reply run together, their results stream as each
finishes, and every call gets its answer in the session log.

An answer the session's tool memory already holds is used instead of running the tool
(:meth:`~shiyi.agent.hooks.RunHooks.cached_result`).  A model that keeps making the same call
(same name, same arguments) is told so once, in the call's result (:data:`STUCK_NUDGE`); if it
does it again, the run stops as ``stuck``.  Every call of a turn is answered, even one cut off
by a cancel or a stop (a reply whose calls lack results is no valid request), and a call
the loop refuses (one that would store shiyi's own text as memory) is answered with why.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence

from shiyi.agent.hooks import RunHooks
from shiyi.agent.stops import Cancellation, _Stop
from shiyi.events import Event, ToolCallEvent, ToolResultEvent
from shiyi.llm.types import Message, ToolCall
from shiyi.tools.base import ToolContext
from shiyi.tools.registry import ToolOutcome, ToolRegistry

STUCK_NUDGE = (
    "\n\n[shiyi] You have made this exact call {count} times with the same arguments. "
    "Do not repeat it: use what you already have, try a different approach, or answer."
)


class ToolTurns:
    """Runs and records the tool calls of one run's turns."""

    def __init__(
        self,
        *,
        tools: ToolRegistry,
        context: ToolContext,
        hooks: RunHooks,
        cancellation: Cancellation,
        record: Callable[[Message], None],
        stuck_repeats: int,
    ) -> None:
        """``record`` writes a message to the run's transcript; ``stuck_repeats``: the
        identical calls that earn a nudge (and, once nudged, stop the run)."""
        self._tools = tools
        self._ctx = context
        self._hooks = hooks
        self._cancellation = cancellation
        self._record = record
        self._stuck_repeats = stuck_repeats
        self._calls_seen: Counter[str] = Counter()
        self._nudged = False

    async def run(
        self, calls: tuple[ToolCall, ...], refused: Mapping[str, str] | None = None
    ) -> AsyncGenerator[Event, None]:
        """``refused``: call id -> why that call is not run (its answer says so)."""
        refused = refused or {}
        for call in calls:
            yield ToolCallEvent(call_id=call.id, name=call.name, args=call.parsed_arguments())
        repeated = self._note_repeats(calls)
        outcomes: dict[str, ToolOutcome] = {}
        declined = [_refused(c, refused[c.id]) for c in calls if c.id in refused]
        cached = {
            c.id: hit
            for c in calls
            if c.id not in refused and (hit := self._hooks.cached_result(c)) is not None
        }
        to_run = [c for c in calls if c.id not in cached and c.id not in refused]
        try:
            for outcome in declined:
                outcomes[outcome.call_id] = outcome
                yield _result_event(outcome)
            for outcome in cached.values():
                outcomes[outcome.call_id] = outcome
                yield _result_event(outcome, cached=True)
            if to_run:
                async for outcome in self._cancellation.relay(self._run_tools(to_run)):
                    outcomes[outcome.call_id] = outcome
                    self._hooks.tool_finished(_call_of(to_run, outcome), outcome)
                    yield _result_event(outcome)
        finally:
            self._record_results(calls, outcomes, repeated)

    def skip(self, calls: Sequence[ToolCall], why: str) -> None:
        """Answer calls that will not run, so the transcript stays a valid request."""
        for call in calls:
            self._record(Message("tool", f"Error: {why}.", tool_call_id=call.id, name=call.name))

    def _note_repeats(self, calls: Sequence[ToolCall]) -> dict[str, int]:
        """Count identical calls; nudge once at the threshold, stop if it happens again."""
        repeated: dict[str, int] = {}
        for call in calls:
            signature = _signature(call)
            self._calls_seen[signature] += 1
            if self._calls_seen[signature] >= self._stuck_repeats:
                repeated[call.id] = self._calls_seen[signature]
        if repeated and self._nudged:
            self.skip(calls, "not run: the run was stopped because the model repeated itself")
            name = next(c.name for c in calls if c.id in repeated)
            raise _Stop(
                "stuck",
                f"stopped: {name} was called {max(repeated.values())} times with the same "
                "arguments, even after a reminder",
            )
        if repeated:
            self._nudged = True
        return repeated

    async def _run_tools(self, calls: Sequence[ToolCall]) -> AsyncIterator[ToolOutcome]:
        finished: asyncio.Queue[ToolOutcome] = asyncio.Queue()
        batch = asyncio.ensure_future(
            self._tools.execute_many(calls, self._ctx, on_done=finished.put_nowait)
        )
        try:
            for _ in calls:
                yield await finished.get()
            await batch
        finally:
            if not batch.done():
                batch.cancel()
                await asyncio.gather(batch, return_exceptions=True)

    def _record_results(
        self,
        calls: Sequence[ToolCall],
        outcomes: dict[str, ToolOutcome],
        repeated: dict[str, int],
    ) -> None:
        for call in calls:
            outcome = outcomes.get(call.id)
            if outcome is None:
                content = "Error: cancelled before this tool finished."
            else:
                content = outcome.content
            if call.id in repeated:
                content += STUCK_NUDGE.format(count=repeated[call.id])
            self._record(Message("tool", content, tool_call_id=call.id, name=call.name))


def _refused(call: ToolCall, why: str) -> ToolOutcome:
    return ToolOutcome(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=f"Error: {why}.",
        summary=f"not run: {why.split(':')[0]}",
        duration_ms=0.0,
        arguments=call.parsed_arguments(),
    )


def _result_event(outcome: ToolOutcome, *, cached: bool = False) -> ToolResultEvent:
    return ToolResultEvent(
        call_id=outcome.call_id,
        name=outcome.name,
        ok=outcome.ok,
        summary=outcome.summary,
        duration_ms=round(outcome.duration_ms, 2),
        cached=cached,
    )


def _call_of(calls: Sequence[ToolCall], outcome: ToolOutcome) -> ToolCall:
    return next(c for c in calls if c.id == outcome.call_id)


def _signature(call: ToolCall) -> str:
    parsed = call.parsed_arguments()
    normalised = json.dumps(parsed, sort_keys=True) if parsed is not None else call.arguments
    return f"{call.name}:{normalised}"
