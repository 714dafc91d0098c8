"""The seam every chat model implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from shiyi.llm.types import Message, StreamChunk, ToolChoice, ToolSpec


@runtime_checkable
class ChatModel(Protocol):
    """An LLM that streams a reply to a list of messages.

    Implementations yield :data:`StreamChunk` values: text, reasoning, tool-call deltas
    (assembled by index), usage and a finish reason.  Transient failures are retried inside
    the implementation; what escapes is a :class:`shiyi.errors.ModelError`.
    """

    @property
    def model_name(self) -> str: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]: ...
