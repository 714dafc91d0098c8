from __future__ import annotations

import json

from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.types import (
    FinishChunk,
    ReasoningChunk,
    TextChunk,
    ToolCallDelta,
    Usage,
    UsageChunk,
)


def test_interleaved_tool_call_pieces_are_joined_by_index() -> None:
    assembler = ReplyAssembler()
    for chunk in [
        ReasoningChunk("think "),
        ReasoningChunk("hard"),
        TextChunk("Hel"),
        TextChunk("lo"),
        ToolCallDelta(0, id="a", name="read_file", arguments='{"pa'),
        ToolCallDelta(1, id="b", name="grep", arguments='{"pattern":'),
        ToolCallDelta(0, arguments='th": "x"}'),
        ToolCallDelta(1, name="grep", arguments=' "y"}'),
        UsageChunk(Usage(10, 5, 0.001)),
        FinishChunk("tool_calls"),
    ]:
        assembler.add(chunk)
    message = assembler.message()
    assert message.content == "Hello"
    assert message.reasoning == "think hard"
    assert [(c.id, c.name) for c in message.tool_calls] == [("a", "read_file"), ("b", "grep")]
    assert json.loads(message.tool_calls[0].arguments) == {"path": "x"}
    assert json.loads(message.tool_calls[1].arguments) == {"pattern": "y"}
    assert assembler.usage == Usage(10, 5, 0.001)
    assert assembler.finish_reason == "tool_calls"


def test_missing_call_id_gets_a_stable_one() -> None:
    assembler = ReplyAssembler()
    assembler.add(ToolCallDelta(3, name="x", arguments="{}"))
    assert assembler.message().tool_calls[0].id == "call_3"


def test_usage_accumulates_and_cost_stays_none_when_unknown() -> None:
    assembler = ReplyAssembler()
    assembler.add(UsageChunk(Usage(1, 2)))
    assembler.add(UsageChunk(Usage(3, 4)))
    assert assembler.usage == Usage(4, 6, None)
