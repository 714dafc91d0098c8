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
    from openai.types.chat import ChatCompletion, ChatCompletionChunk
    from openai.types.completion_usage import CompletionUsage

Pricer: TypeAlias = Callable[[int, int, str], "float | None"]
"""``(prompt_tokens, completion_tokens, model reported by the server) -> USD or None``."""
Counter: TypeAlias = Callable[[str], int]


class _EmptyReply(Exception):
    """The reply ended with no text, no tool call and no finish reason (e.g. a local server
    that dropped this request when another one arrived, or one that cannot stream tools)."""


class _CutOff(Exception):
    """The stream stopped without a finish reason and without ``[DONE]``."""


class EstimatedUsage:
    """Token counts for a server that reports none: the prompt as sent, the reply as read."""

    def __init__(self, prompt_tokens: Callable[[], int], count: Counter) -> None:
        self.prompt_tokens = prompt_tokens
        self.count = count


class ChunkDecoder:
    """Turns SDK stream chunks into shiyi chunks; usage and finish are emitted at the end.

    Holding usage until the end means a server that repeats cumulative usage on every chunk
    is still counted once.
    """

    def __init__(self, price: Pricer, estimate: EstimatedUsage | None = None) -> None:
        self._price = price
        self._estimate = estimate
        self._usage: CompletionUsage | None = None
        self._reported_model = ""
        self._finish_reason: str | None = None
        self._saw_tool_call = False
        self._said: list[str] = []
        """Everything the reply said (text, reasoning, tool names and arguments)."""

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
        for chunk in out:
            self._said.append(_said_by(chunk))
        return out

    def feed_completion(self, completion: ChatCompletion) -> list[StreamChunk]:
        """The chunks of a whole (non-streamed) reply, as if it had been streamed."""
        if completion.usage is not None:
            self._usage = completion.usage
        self._reported_model = completion.model or self._reported_model
        choice = next((c for c in completion.choices if c.index == 0), None)
        if choice is None:
            return []
        self._finish_reason = choice.finish_reason or None
        message = choice.message
        calls = [
            _WholeCall(i, call.id, call.function.name, call.function.arguments)
            for i, call in enumerate(message.tool_calls or ())
            if call.type == "function"  # not the Responses API's "custom" tools
        ]
        return self._delta(_WholeDelta(message, calls))

    def finish(self, *, done: bool = True) -> list[StreamChunk]:
        """Usage and the finish chunk; raises :class:`_EmptyReply` or :class:`_CutOff` for a
        reply that is not one (``done``: the server sent ``[DONE]``)."""
        said = any(self._said)
        if not said and self._finish_reason is None:
            raise _EmptyReply("the server ended its reply without any text or tool call")
        if self._finish_reason is None and not done:
            raise _CutOff("the stream stopped without a finish reason or [DONE]")
        out: list[StreamChunk] = []
        usage = self._reported_usage() or self._estimated_usage()
        if usage is not None:
            out.append(UsageChunk(usage))
        # Some local servers omit finish_reason; infer the only two sensible ones.
        fallback = "tool_calls" if self._saw_tool_call else "stop"
        out.append(FinishChunk(self._finish_reason or fallback))
        return out

    def _reported_usage(self) -> Usage | None:
        if self._usage is None:
            return None
        prompt, completion = self._usage.prompt_tokens, self._usage.completion_tokens
        if prompt == 0 and completion == 0 and self._estimate is not None:
            return None  # servers that send a zeroed usage object count nothing either
        return Usage(prompt, completion, self._price(prompt, completion, self._reported_model))

    def _estimated_usage(self) -> Usage | None:
        if self._estimate is None:
            return None
        prompt = self._estimate.prompt_tokens()
        completion = self._estimate.count("".join(self._said))
        cost = self._price(prompt, completion, self._reported_model)
        return Usage(prompt, completion, cost, estimated=True)


def _said_by(chunk: StreamChunk) -> str:
    if isinstance(chunk, TextChunk | ReasoningChunk):
        return chunk.text
    if isinstance(chunk, ToolCallDelta):
        return (chunk.name or "") + chunk.arguments
    return ""


class _WholeCall:
    """A complete tool call shaped like a streamed delta's."""

    def __init__(self, index: int, call_id: str, name: str, arguments: str) -> None:
        self.index = index
        self.id = call_id
        self.function = _Function(name, arguments)


class _Function:
    def __init__(self, name: str, arguments: str) -> None:
        self.name = name
        self.arguments = arguments


class _WholeDelta:
    """A whole reply message shaped like one streamed delta."""

    def __init__(self, message: Any, calls: list[_WholeCall]) -> None:
        self.content = message.content
        self.tool_calls = calls
        for field in ("reasoning_content", "reasoning"):
            setattr(self, field, getattr(message, field, None))


def _reasoning_text(delta: Any) -> str:
    """DeepSeek streams ``reasoning_content``; vLLM and OpenRouter use ``reasoning``."""
    for field in ("reasoning_content", "reasoning"):
        value = getattr(delta, field, None)
        if isinstance(value, str) and value:
            return value
    return ""
