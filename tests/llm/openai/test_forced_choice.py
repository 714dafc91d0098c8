"""A server that cannot take a forced tool_choice (llama-cpp-python's answers 500): the compact
profile's forced first step falls back to "auto", says why once, and stops forcing."""

from __future__ import annotations

import logging

import pytest

from shiyi.errors import ModelError
from shiyi.llm.types import TextChunk, ToolSpec
from tests.llm.conftest import collect, model_for
from tests.support.fake_openai import FakeError, FakeOpenAIServer, FakeReply

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {}})
REFUSAL = "tool_choice 'required' is not supported"


@pytest.mark.parametrize("status", [400, 500])
async def test_a_refused_forced_choice_is_sent_again_as_auto_and_not_forced_again(
    srv: FakeOpenAIServer, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    srv.enqueue(FakeError(status, REFUSAL), FakeReply("first"), FakeReply("second"))
    model = model_for(srv)

    with caplog.at_level(logging.WARNING, logger="shiyi.llm.openai.model"):
        first = await collect(model, tools=[READ], tool_choice="required")
        second = await collect(model, tools=[READ], tool_choice="read_file")

    assert "".join(c.text for c in first if isinstance(c, TextChunk)) == "first"
    assert "".join(c.text for c in second if isinstance(c, TextChunk)) == "second"
    assert [r["tool_choice"] for r in srv.requests] == ["required", "auto", "auto"]
    [warning] = [r.getMessage() for r in caplog.records if "forced tool_choice" in r.getMessage()]
    assert REFUSAL in warning and "force_tool_choice" in warning


async def test_forcing_can_be_kept_on(srv: FakeOpenAIServer) -> None:
    """force_tool_choice: true trusts the server: its refusal is an ordinary error."""
    srv.enqueue(*[FakeError(400, REFUSAL) for _ in range(3)])
    model = model_for(srv, force_tool_choice=True)

    with pytest.raises(ModelError, match="not supported"):
        await collect(model, tools=[READ], tool_choice="required")

    assert {r["tool_choice"] for r in srv.requests} == {"required"}


async def test_forcing_can_be_switched_off(srv: FakeOpenAIServer) -> None:
    srv.enqueue(FakeReply("ok"))
    await collect(model_for(srv, force_tool_choice=False), tools=[READ], tool_choice="required")
    assert srv.requests[0]["tool_choice"] == "auto"
