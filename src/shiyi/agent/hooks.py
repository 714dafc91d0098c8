"""The run loop's seam to the context layer: what to send, cached results, extra events."""

from __future__ import annotations

from typing import Protocol

from shiyi.events import Event, RunStatus
from shiyi.llm.types import Message, ToolCall, Usage
from shiyi.tools.registry import ToolOutcome


class RunHooks(Protocol):
    def messages(self, *, answering: bool = False, plain: bool = False) -> list[Message]:
        """The full request for the next model call, system message first; ``answering``:
        the call may not use tools (notes on tool use are left out); ``plain``: the plain
        answer layout of a guided small model (:mod:`shiyi.context.plain`)."""
        ...

    def cached_result(self, call: ToolCall) -> ToolOutcome | None:
        """An answer from the session's tool memory, or None to run the tool."""
        ...

    def tool_finished(self, call: ToolCall, outcome: ToolOutcome) -> None: ...

    def model_finished(self, sent: list[Message], usage: Usage) -> None:
        """After each model call (e.g. to calibrate token estimates)."""
        ...

    def pending_events(self) -> list[Event]:
        """Events produced by tools (plan progress) to emit after a tool turn."""
        ...

    def run_finished(self, status: RunStatus) -> list[Event]: ...
