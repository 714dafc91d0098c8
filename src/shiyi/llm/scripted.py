"""A chat model that replays a script: the test double for everything above the LLM.

Each step of the script is a :class:`ScriptedReply`, a :class:`ModelError` to raise, or a
function of the request that returns a reply (like pydantic-ai's ``FunctionModel``).  Replies
are streamed in small chunks, and every request is recorded so tests can assert what the
model was sent.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from shiyi.errors import ConfigError, ModelError
from shiyi.llm.types import (
    FinishChunk,
    Message,
    ReasoningChunk,
    StreamChunk,
    TextChunk,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    Usage,
    UsageChunk,
)


@dataclass(slots=True, frozen=True)
class ScriptedCall:
    """A tool call to emit. ``arguments`` may be a dict or raw (possibly broken) JSON text."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def raw_arguments(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(slots=True, frozen=True)
class ScriptedReply:
    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    usage: Usage | None = None
    delay: float = 0.0
    """Seconds to sleep between chunks (lets tests cancel mid-stream)."""


@dataclass(slots=True, frozen=True)
class ScriptedRequest:
    """What the model was sent on one call."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    tool_choice: ToolChoice

    @property
    def tool_names(self) -> list[str]:
        return [spec.name for spec in self.tools]

    @property
    def last(self) -> Message:
        return self.messages[-1]


ReplyFunction: TypeAlias = Callable[[ScriptedRequest], "ScriptedReply | ModelError"]
ScriptStep: TypeAlias = "ScriptedReply | ModelError | ReplyFunction"


def reply(text: str = "", *calls: ScriptedCall, reasoning: str = "") -> ScriptedReply:
    return ScriptedReply(text=text, reasoning=reasoning, tool_calls=calls)


def call(name: str, arguments: dict[str, Any] | str | None = None, **kwargs: Any) -> ScriptedCall:
    """``call("read_file", path="a.txt")`` or ``call("x", '{"broken"')``."""
    return ScriptedCall(name, kwargs if arguments is None else arguments)


class ScriptedModel:
    def __init__(
        self,
        script: Iterable[ScriptStep] = (),
        *,
        chunk_size: int = 4,
        model_name: str = "scripted",
        repeat_last: bool = False,
    ) -> None:
        self._script: deque[ScriptStep] = deque(script)
        self._total = len(self._script)
        self._chunk_size = max(1, chunk_size)
        self._name = model_name
        self._repeat_last = repeat_last
        self.requests: list[ScriptedRequest] = []

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def remaining(self) -> int:
        return len(self._script)

    def add(self, *steps: ScriptStep) -> None:
        self._script.extend(steps)
        self._total += len(steps)

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        request = ScriptedRequest(tuple(messages), tuple(tools), tool_choice)
        self.requests.append(request)
        step = self._next_step()
        outcome = step(request) if callable(step) else step
        if isinstance(outcome, ModelError):
            raise outcome
        async for chunk in self._chunks(outcome, request):
            yield chunk

    def _next_step(self) -> ScriptStep:
        if not self._script:
            raise ModelError(
                f"scripted model has no response left (the script had {self._total} steps "
                f"and {len(self.requests)} requests were made)"
            )
        if self._repeat_last and len(self._script) == 1:
            return self._script[0]
        return self._script.popleft()

    async def _chunks(
        self, outcome: ScriptedReply, request: ScriptedRequest
    ) -> AsyncIterator[StreamChunk]:
        for piece in self._pieces(outcome.reasoning):
            await self._pause(outcome.delay)
            yield ReasoningChunk(piece)
        for piece in self._pieces(outcome.text):
            await self._pause(outcome.delay)
            yield TextChunk(piece)
        for index, scripted in enumerate(outcome.tool_calls):
            call_id = scripted.id or f"call_{len(self.requests)}_{index}"
            yield ToolCallDelta(index, id=call_id, name=scripted.name)
            for piece in self._pieces(scripted.raw_arguments()):
                await self._pause(outcome.delay)
                yield ToolCallDelta(index, arguments=piece)
        yield UsageChunk(outcome.usage or _estimate_usage(request, outcome))
        yield FinishChunk("tool_calls" if outcome.tool_calls else "stop")

    def _pieces(self, text: str) -> list[str]:
        size = self._chunk_size
        return [text[i : i + size] for i in range(0, len(text), size)]

    @staticmethod
    async def _pause(delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)

    @classmethod
    def from_file(cls, path: Path) -> ScriptedModel:
        """Load a JSON script: a list of ``{"text", "reasoning", "tool_calls", "error"}``."""
        try:
            steps = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot load scripted model script {path}: {exc}") from exc
        if not isinstance(steps, list):
            raise ConfigError(f"scripted model script {path} must be a JSON list of steps")
        return cls(_step_from_json(step) for step in steps)


def _step_from_json(step: dict[str, Any]) -> ScriptStep:
    if "error" in step:
        return ModelError(str(step["error"]), retryable=bool(step.get("retryable", False)))
    calls = tuple(
        ScriptedCall(c["name"], c.get("arguments", {}), c.get("id"))
        for c in step.get("tool_calls", [])
    )
    return ScriptedReply(
        text=step.get("text", ""),
        reasoning=step.get("reasoning", ""),
        tool_calls=calls,
        delay=float(step.get("delay", 0.0)),
    )


def _estimate_usage(request: ScriptedRequest, outcome: ScriptedReply) -> Usage:
    # Roughly 4 characters a token: enough for budgets and usage limits in tests.
    prompt = sum(len(m.content) for m in request.messages) // 4 + 1
    completion = (len(outcome.text) + sum(len(c.raw_arguments()) for c in outcome.tool_calls)) // 4
    return Usage(prompt, completion + 1, 0.0)
