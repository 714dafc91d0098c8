"""Decode the OpenAI SDK's ``ChatCompletionChunk`` stream into shiyi stream chunks.

Kept apart from the provider so the wire details (DeepSeek's reasoning field, servers that
omit ``finish_reason``) live in one small place.  Only type-checking imports of ``openai``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from shiyi.llm.types import (
    FinishChunk,
    ReasoningChunk,
    StreamChunk,
    TextChunk,
    ToolCallDelta,
    Usage,
    UsageChunk,
)

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk
    from openai.types.completion_usage import CompletionUsage

Pricer: TypeAlias = Callable[[int, int, str], "float | None"]
"""``(prompt_tokens, completion_tokens, model reported by the server) -> USD or None``."""


class ChunkDecoder:
    """Turns SDK stream chunks into shiyi chunks; usage and finish are emitted at the end.

    Holding usage until the end means a server that repeats cumulative usage on every chunk
    is still counted once.
    """

    def __init__(self, price: Pricer) -> None:
        self._price = price
        self._usage: CompletionUsage | None = None
        self._reported_model = ""
        self._finish_reason: str | None = None
        self._saw_tool_call = False

    def feed(self, chunk: ChatCompletionChunk) -> list[StreamChunk]:
        if chunk.usage is not None:
            self._usage = chunk.usage
        self._reported_model = chunk.model or self._reported_model
        out: list[StreamChunk] = []
        for choice in chunk.choices:
            if choice.index != 0:  # we never ask for n > 1
                continue
            if choice.delta is not None:
                out.extend(self._delta(choice.delta))
            if choice.finish_reason:
                self._finish_reason = choice.finish_reason
        return out

    def _delta(self, delta: Any) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        reasoning = _reasoning_text(delta)
        if reasoning:
            out.append(ReasoningChunk(reasoning))
        if delta.content:
            out.append(TextChunk(delta.content))
        for position, call in enumerate(delta.tool_calls or ()):
            self._saw_tool_call = True
            function = call.function
            index = call.index if isinstance(call.index, int) else position
            out.append(
                ToolCallDelta(
                    index,
                    id=call.id or None,
                    name=(function.name if function else None) or None,
                    arguments=(function.arguments if function else None) or "",
                )
            )
        return out

    def finish(self) -> list[StreamChunk]:
        out: list[StreamChunk] = []
        if self._usage is not None:
            prompt, completion = self._usage.prompt_tokens, self._usage.completion_tokens
            cost = self._price(prompt, completion, self._reported_model)
            out.append(UsageChunk(Usage(prompt, completion, cost)))
        # Some local servers omit finish_reason; infer the only two sensible ones.
        fallback = "tool_calls" if self._saw_tool_call else "stop"
        out.append(FinishChunk(self._finish_reason or fallback))
        return out


def _reasoning_text(delta: Any) -> str:
    """DeepSeek streams ``reasoning_content``; vLLM and OpenRouter use ``reasoning``."""
    for field in ("reasoning_content", "reasoning"):
        value = getattr(delta, field, None)
        if isinstance(value, str) and value:
            return value
    return ""
