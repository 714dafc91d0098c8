"""Plain data exchanged with chat models: messages, tool specs and streamed chunks."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
ToolChoice: TypeAlias = Literal["auto", "none", "required"] | str
"""``auto``/``none``/``required`` or the name of one tool the model must call."""


@dataclass(slots=True, frozen=True)
class ToolCall:
    """A tool call requested by the model. ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a JSON object, or None when the model sent anything else."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(slots=True)
class Message:
    """One chat message in OpenAI shape, plus the reasoning text some models return."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None

    def to_openai(self, *, include_reasoning: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.role == "tool" and self.name:
            out["name"] = self.name
        if include_reasoning and self.reasoning:
            out["reasoning_content"] = self.reasoning
        return out

    def to_json(self) -> str:
        return json.dumps(
            {
                "role": self.role,
                "content": self.content,
                "tool_calls": [[c.id, c.name, c.arguments] for c in self.tool_calls],
                "tool_call_id": self.tool_call_id,
                "name": self.name,
                "reasoning": self.reasoning,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> Message:
        data = json.loads(text)
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_calls=tuple(ToolCall(*c) for c in data.get("tool_calls") or ()),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            reasoning=data.get("reasoning"),
        )


@dataclass(slots=True, frozen=True)
class ToolSpec:
    """What the model sees of a tool: its name, description and JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(slots=True, frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    estimated: bool = False
    """Counted here with the local tokenizer: the server reported no usage."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        cost: float | None
        if self.cost is None and other.cost is None:
            cost = None
        else:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            cost,
            self.estimated or other.estimated,
        )


# --- streamed chunks -------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class TextChunk:
    text: str
    kind: Literal["text"] = "text"


@dataclass(slots=True, frozen=True)
class ReasoningChunk:
    text: str
    kind: Literal["reasoning"] = "reasoning"


@dataclass(slots=True, frozen=True)
class ToolCallDelta:
    """A piece of a tool call. Pieces with the same ``index`` belong to one call."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(slots=True, frozen=True)
class UsageChunk:
    usage: Usage
    kind: Literal["usage"] = "usage"


@dataclass(slots=True, frozen=True)
class FinishChunk:
    reason: str
    kind: Literal["finish"] = "finish"


StreamChunk: TypeAlias = TextChunk | ReasoningChunk | ToolCallDelta | UsageChunk | FinishChunk
