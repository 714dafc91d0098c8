"""Turn a stream of chunks back into one assistant message."""

from __future__ import annotations

from dataclasses import dataclass, field

from shiyi.llm.types import (
    FinishChunk,
    Message,
    ReasoningChunk,
    StreamChunk,
    TextChunk,
    ToolCall,
    ToolCallDelta,
    Usage,
    UsageChunk,
)


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ReplyAssembler:
    """Accumulates streamed chunks; tool-call pieces are joined by their index."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None

    def add(self, chunk: StreamChunk) -> None:
        match chunk:
            case TextChunk(text=text):
                self.text.append(text)
            case ReasoningChunk(text=text):
                self.reasoning.append(text)
            case ToolCallDelta():
                partial = self.calls.setdefault(chunk.index, _PartialCall())
                if chunk.id:
                    partial.id = chunk.id
                if chunk.name and not partial.name:
                    # Servers send the name once; a repeat in later pieces must not double it.
                    partial.name = chunk.name
                partial.arguments.append(chunk.arguments)
            case UsageChunk(usage=usage):
                self.usage = self.usage + usage
            case FinishChunk(reason=reason):
                self.finish_reason = reason

    def tool_calls(self) -> tuple[ToolCall, ...]:
        calls = []
        for index in sorted(self.calls):
            partial = self.calls[index]
            calls.append(ToolCall(self.call_id(index), partial.name, "".join(partial.arguments)))
        return tuple(calls)

    def call_id(self, index: int) -> str:
        """The id of the call streamed at ``index`` (the server's, else one made up)."""
        partial = self.calls.get(index)
        return partial.id if partial is not None and partial.id else f"call_{index}"

    def message(self) -> Message:
        reasoning = "".join(self.reasoning)
        return Message(
            role="assistant",
            content="".join(self.text),
            tool_calls=self.tool_calls(),
            reasoning=reasoning or None,
        )
