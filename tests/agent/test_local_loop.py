"""The run loop with the real embedded SmolLM2 model executing a tool call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from shiyi.agent import Agent
from shiyi.config import Settings
from shiyi.llm.local import LocalModel
from shiyi.llm.types import Message, StreamChunk, ToolChoice, ToolSpec
from shiyi.tools import ToolRegistry
from shiyi.tools.builtins import builtin_tools
from tests.conftest import collect

pytestmark = pytest.mark.local_model


class FirstTurnMustCallATool:
    """A 135M model rarely chooses a tool on its own: require one on the first request.

    Everything else (prompting, grammar, parsing, execution) is the real pipeline.
    """

    def __init__(self, inner: LocalModel) -> None:
        self.inner = inner
        self.choices: list[ToolChoice] = []

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        choice: ToolChoice = "required" if not self.choices else "none"
        self.choices.append(choice)
        async for chunk in self.inner.stream(
            messages, tools=tools, tool_choice=choice, temperature=0.0, max_tokens=48
        ):
            yield chunk


async def test_local_model_tool_call_is_executed_by_the_loop(settings: Settings) -> None:
    (settings.workspace / "hello.txt").write_text("hi\n")
    model = FirstTurnMustCallATool(LocalModel(settings.model_role("main")))
    tools = ToolRegistry(t for t in builtin_tools(settings.tools) if t.spec.name == "list_dir")
    agent = Agent(model, settings=settings, tools=tools)
    events = await collect(agent.send("List the files in the workspace."))
    call = next(e for e in events if e.type == "tool_call")
    result = next(e for e in events if e.type == "tool_result")
    assert call.name == "list_dir"  # type: ignore[union-attr]
    assert call.args is not None  # type: ignore[union-attr]
    assert result.call_id == call.call_id  # type: ignore[union-attr]
    assert events[-1].status == "completed"  # type: ignore[union-attr]
    assert events[-1].iterations == 2  # type: ignore[union-attr]
    history = agent.history()
    # The final reply may be empty (a 135M model can stop at once): only the call is certain.
    assert [m.role for m in history][:3] == ["user", "assistant", "tool"]
