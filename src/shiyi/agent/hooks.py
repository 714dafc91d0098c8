"""The run loop's seam to the context layer: what to send, cached results, extra events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from shiyi.events import Event, RunStatus
from shiyi.llm.types import Message, ToolCall, Usage
from shiyi.tools.registry import ToolOutcome


class RunHooks(Protocol):
    def messages(self) -> list[Message]:
        """The full request for the next model call, system message first."""
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


class PlainHooks:
    """No context engineering: a system prompt and the history as given."""

    def __init__(
        self, system_prompt: Callable[[], str], history: Callable[[], list[Message]]
    ) -> None:
        self._system_prompt = system_prompt
        self._history = history

    def messages(self) -> list[Message]:
        return [Message("system", self._system_prompt()), *self._history()]

    def cached_result(self, call: ToolCall) -> ToolOutcome | None:
        return None

    def tool_finished(self, call: ToolCall, outcome: ToolOutcome) -> None:
        return None

    def model_finished(self, sent: list[Message], usage: Usage) -> None:
        return None

    def pending_events(self) -> list[Event]:
        return []

    def run_finished(self, status: RunStatus) -> list[Event]:
        return []
