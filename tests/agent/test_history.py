from __future__ import annotations

from shiyi.agent.history import INTERRUPTED_RESULT, repair, sanitize_arguments, tail_window
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


def test_tail_window_keeps_newest_and_never_splits_calls() -> None:
    history: list[Message] = []
    for i in range(50):
        history += [Message("user", f"q{i} " + "x" * 100), assistant_with(f"c{i}"), result(f"c{i}")]
    window = tail_window(history, budget_tokens=200)
    assert window[-1] is history[-1]
    assert window[0].role != "tool"
    assert len(window) < len(history)
    ids = {m.tool_call_id for m in window if m.role == "tool"}
    callers = {c.id for m in window for c in m.tool_calls}
    assert ids <= callers


def test_tail_window_keeps_an_oversized_newest_message() -> None:
    huge = Message("user", "x" * 100_000)
    assert tail_window([Message("user", "old"), huge], budget_tokens=10) == [huge]
