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
    # What changes per run opens the newest user message, not the system message.
    newest_user = built.messages[5]
    assert newest_user.content.startswith("<context>\nCurrent time: 2026-11-22 09:00")
    assert "likes tea" in newest_user.content
    assert newest_user.content.endswith("</context>\n\n" + history(2)[4].content)
    assert "2026-11-22" not in built.messages[0].content
    assert "likes tea" not in built.messages[0].content
    assert [m.content for m in built.messages[1:5]] == [m.content for m in history(2)[:4]]
    assert built.messages[6:] == history(2)[5:]


def test_a_later_request_repeats_the_earlier_one_up_to_the_last_exchange() -> None:
    """The prefix a model server can cache: only the newest exchange changes."""
    builder = ContextBuilder(ContextSettings(), 8192)
    earlier = builder.build(parts(memory_hint="- likes tea"), history(3)).messages
    later_parts = parts(memory_hint="- likes coffee", working=["Scratchpad: step 2"])
    later = builder.build(later_parts, history(4)).messages
    assert later[:9] == earlier[:9]  # system + the first two turns, unchanged
    assert earlier[9].content.startswith("<context>") and "likes tea" in earlier[9].content
    assert later[9] == history(4)[8]  # the older question, now without its context
    assert "likes coffee" in later[13].content and "step 2" in later[13].content


def test_without_a_user_message_the_run_context_closes_the_system_message() -> None:
    builder = ContextBuilder(ContextSettings(), 8192)
    built = builder.build(parts(memory_hint="- likes tea"), [])
    assert len(built.messages) == 1
    assert built.messages[0].content.startswith("You are shiyi.")
    assert built.messages[0].content.endswith("- likes tea")
    assert built.system_tokens == builder.counter.count_message(built.messages[0])


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
        assert any(m.content.endswith(msgs[-4].content) for m in built.messages)
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
    assert built.messages[1].role == "user"
    assert built.messages[1].content.endswith("</context>\n\nrefactor the parser")
    check_pairs(built.messages[2:])


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
