from __future__ import annotations

import json
from pathlib import Path

import pytest

from shiyi.errors import ConfigError, ModelError
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call, reply
from shiyi.llm.types import Message, TextChunk, ToolSpec


async def drain(model: ScriptedModel, *messages: Message) -> ReplyAssembler:
    assembler = ReplyAssembler()
    async for chunk in model.stream(list(messages), tools=[ToolSpec("t", "a tool")]):
        assembler.add(chunk)
    return assembler


async def test_replies_stream_in_small_chunks_and_requests_are_recorded() -> None:
    model = ScriptedModel([reply("hello world", call("t", x=1))], chunk_size=3)
    chunks = [c async for c in model.stream([Message("user", "hi")])]
    texts = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert texts == ["hel", "lo ", "wor", "ld"]
    assert model.requests[0].last.content == "hi"


async def test_function_steps_see_the_request() -> None:
    def echo(request: ScriptedRequest) -> ScriptedReply:
        return reply(f"you said {request.last.content} with {request.tool_names}")

    model = ScriptedModel([echo])
    result = await drain(model, Message("user", "ping"))
    assert result.message().content == "you said ping with ['t']"


async def test_errors_are_raised_and_exhaustion_is_explained() -> None:
    model = ScriptedModel([ModelError("boom", retryable=True)])
    with pytest.raises(ModelError, match="boom"):
        await drain(model, Message("user", "x"))
    with pytest.raises(ModelError, match="no response left"):
        await drain(model, Message("user", "x"))


async def test_raw_broken_arguments_pass_through() -> None:
    model = ScriptedModel([reply("", call("t", '{"x": '))])
    result = await drain(model, Message("user", "x"))
    assert result.message().tool_calls[0].arguments == '{"x": '


async def test_script_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps([{"text": "a", "tool_calls": [{"name": "t", "arguments": {"k": 1}}]}])
    )
    result = await drain(ScriptedModel.from_file(path), Message("user", "x"))
    assert result.message().tool_calls[0].name == "t"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot load scripted model script"):
        ScriptedModel.from_file(path)
