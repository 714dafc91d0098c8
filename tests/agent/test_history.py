from __future__ import annotations

from shiyi.agent.history import INTERRUPTED_RESULT, repair, sanitize_arguments
from shiyi.llm.types import Message, ToolCall


def assistant_with(*ids: str) -> Message:
    return Message("assistant", "", tuple(ToolCall(i, "t", "{}") for i in ids))


def result(call_id: str, text: str = "r") -> Message:
    return Message("tool", text, tool_call_id=call_id, name="t")


def test_repair_fills_missing_results_and_drops_orphans() -> None:
    history = [
        Message("user", "go"),
        assistant_with("a", "b"),
        result("a"),
        Message("user", "next"),
        result("zzz"),
    ]
    fixed = repair(history)
    assert [m.role for m in fixed] == ["user", "assistant", "tool", "tool", "user"]
    assert fixed[3].tool_call_id == "b"
    assert fixed[3].content == INTERRUPTED_RESULT


def test_repair_at_the_end_of_the_history() -> None:
    fixed = repair([Message("user", "go"), assistant_with("a")])
    assert fixed[-1].tool_call_id == "a"


def test_sanitize_replaces_only_broken_arguments() -> None:
    message = Message(
        "assistant", "", (ToolCall("a", "t", '{"x": 1}'), ToolCall("b", "t", '{"x": '))
    )
    clean = sanitize_arguments(message)
    assert [c.arguments for c in clean.tool_calls] == ['{"x": 1}', "{}"]
    untouched = Message("assistant", "", (ToolCall("a", "t", '{"x": 1}'),))
    assert sanitize_arguments(untouched) is untouched
