from __future__ import annotations

from datetime import datetime
from pathlib import Path

from shiyi.config.settings import ContextSettings
from shiyi.context.builder import ContextBuilder, ContextParts
from shiyi.context.compression import DIGEST_PREFIX, SUMMARY_PREFIX, blocks_to_summarise
from shiyi.context.summaries import SummaryStore
from shiyi.llm.types import Message, ToolCall

NOW = datetime(2026, 11, 22, 9, 0)


def parts(**extra: object) -> ContextParts:
    return ContextParts(persona="You are shiyi.", workspace=Path("/ws"), now=NOW, **extra)  # type: ignore[arg-type]


def turn(i: int, words: int = 40) -> list[Message]:
    call = ToolCall(f"c{i}", "grep", f'{{"pattern": "x{i}"}}')
    return [
        Message("user", f"question {i}: " + "lorem ipsum " * words),
        Message("assistant", "", (call,)),
        Message(
            "tool", f"result {i}\n" + "match line\n" * words, tool_call_id=call.id, name="grep"
        ),
        Message("assistant", f"answer {i}: " + "dolor sit " * words),
    ]


def history(turns: int, words: int = 40) -> list[Message]:
    return [m for i in range(turns) for m in turn(i, words)]


def check_pairs(messages: list[Message]) -> None:
    """Every tool result follows its call; nothing starts with an orphan result."""
    open_calls: set[str] = set()
    for message in messages:
        if message.role == "tool":
            assert message.tool_call_id in open_calls
        else:
            open_calls = {c.id for c in message.tool_calls}


def test_small_history_is_sent_whole_with_system_first() -> None:
    builder = ContextBuilder(ContextSettings(), 8192)
    built = builder.build(parts(memory_hint="- likes tea"), history(2))
    assert built.level == 0
    assert built.messages[0].role == "system"
    assert "You are shiyi." in built.messages[0].content
    assert "2026-11-22 09:00" in built.messages[0].content
    assert "likes tea" in built.messages[0].content
    assert built.messages[1:] == history(2)


def test_deterministic_for_the_same_inputs() -> None:
    builder = ContextBuilder(ContextSettings(), 8192)
    assert (
        builder.build(parts(), history(30)).messages == builder.build(parts(), history(30)).messages
    )


def test_level_1_trims_old_tool_outputs_and_keeps_newest() -> None:
    builder = ContextBuilder(ContextSettings(), 8192)
    msgs = history(13)
    built = builder.build(parts(), msgs)
    assert built.level == 1
    assert built.messages[-1] == msgs[-1]
    assert any(m.content.startswith("[tool output trimmed") for m in built.messages)
    assert built.total_tokens <= builder.budget.context_window - builder.budget.reply_reserve
    check_pairs(built.messages[1:])


def test_level_2_uses_cached_summaries_and_reports_missing(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path / "s.sqlite3")
    builder = ContextBuilder(ContextSettings(), 8192, summaries=store)
    msgs = history(16)
    first = builder.build(parts(), msgs)
    assert first.level == 2
    assert first.pending_blocks
    for block in first.pending_blocks:
        store.put(block.key, f"summary of block at {block.start}", "test")
    second = builder.build(parts(), msgs)
    assert second.pending_blocks == []
    assert any(m.content.startswith(SUMMARY_PREFIX) for m in second.messages)
    assert second.messages[-1] == msgs[-1]
    check_pairs(second.messages[1:])


def test_level_3_digest_plus_tail_under_budget() -> None:
    builder = ContextBuilder(ContextSettings(), 4096)
    msgs = history(60, words=60)
    built = builder.build(parts(), msgs)
    assert built.level == 3
    assert built.messages[1].content.startswith(DIGEST_PREFIX)
    assert built.digest_source  # the model digest is not cached yet
    assert built.messages[-1] == msgs[-1]
    assert built.total_tokens <= builder.budget.context_window - builder.budget.reply_reserve
    check_pairs(built.messages[1:])


def test_every_turn_stays_under_budget_and_keeps_the_newest_user_message() -> None:
    builder = ContextBuilder(ContextSettings(), 4096)
    msgs: list[Message] = []
    for i in range(80):
        msgs += turn(i, words=30)
        built = builder.build(parts(), msgs)
        assert built.total_tokens <= builder.budget.context_window - builder.budget.reply_reserve
        assert any(m.content == msgs[-4].content for m in built.messages)
        check_pairs(built.messages[1:])


def test_newest_user_message_survives_a_long_tool_run() -> None:
    builder = ContextBuilder(ContextSettings(), 4096)
    task = Message("user", "refactor the parser")
    msgs = [task]
    for i in range(40):
        call = ToolCall(f"c{i}", "read_file", f'{{"path": "f{i}.py"}}')
        msgs += [
            Message("assistant", "", (call,)),
            Message("tool", "x " * 300, tool_call_id=call.id, name="read_file"),
        ]
    built = builder.build(parts(), msgs)
    assert task in built.messages
    check_pairs([m for m in built.messages[1:] if m is not task])


def test_focused_file_references_replace_full_results() -> None:
    builder = ContextBuilder(ContextSettings(), 8192)
    msgs = history(2)
    refs = {"c0": "[read_file: a.py — 10 lines, full text in the focused files block]"}
    built = builder.build(parts(), msgs, refs.get)
    assert built.messages[3].content == refs["c0"]
    assert built.messages[7].content == msgs[6].content


def test_block_keys_are_stable_as_the_conversation_grows() -> None:
    a = blocks_to_summarise(history(22), 10, 10)
    b = blocks_to_summarise(history(30), 10, 10)
    assert [x.key for x in a] == [x.key for x in b][: len(a)]
