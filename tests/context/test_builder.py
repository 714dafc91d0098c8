from __future__ import annotations

from datetime import datetime
from pathlib import Path

from shiyi.config.settings import ContextSettings
from shiyi.context.builder import ContextBuilder, ContextParts, SentContext
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


def test_a_later_request_repeats_the_earlier_one_whole() -> None:
    """The prefix a model server can cache: the old question keeps the block it was sent
    with, so the next request only adds to the previous one."""
    builder = ContextBuilder(ContextSettings(), 8192)
    first = builder.build(parts(memory_hint="- likes tea"), history(3))
    assert first.framed is not None and first.framed[0] == 8
    earlier = {first.framed[0]: first.framed[1]}
    later = builder.build(parts(memory_hint="- likes coffee", earlier=earlier), history(4))
    assert later.messages[: len(first.messages)] == first.messages
    assert "likes tea" in later.messages[9].content
    assert "likes coffee" in later.messages[13].content
    # Without the record the old question goes out bare: the cache stops there.
    bare = builder.build(parts(memory_hint="- likes coffee"), history(4)).messages
    assert bare[9] == history(4)[8]


def test_a_recorded_block_is_only_resent_with_the_words_it_was_sent_with() -> None:
    builder = ContextBuilder(ContextSettings(), 8192)
    first = builder.build(parts(memory_hint="- likes tea"), history(3))
    assert first.framed is not None
    changed = history(4)
    changed[8] = Message("user", "a different question now sits here")
    later = builder.build(parts(earlier=dict([first.framed])), changed).messages
    assert later[9] == changed[8]


def test_working_notes_close_the_request_after_the_last_tool_result() -> None:
    builder = ContextBuilder(ContextSettings(), 8192)
    msgs = history(2)[:-1]  # ends with a tool result
    built = builder.build(parts(working=["Scratchpad: step 2"]), msgs)
    newest_user, last = built.messages[5], built.messages[-1]
    assert "step 2" not in newest_user.content
    assert last.content == msgs[-1].content + "\n\n<context>\nScratchpad: step 2\n</context>"
    # The next step repeats this one up to the tool result's own text.
    call = ToolCall("c9", "grep", "{}")
    step = [*msgs, Message("assistant", "", (call,)), Message("tool", "r", tool_call_id="c9")]
    after = builder.build(parts(working=["Scratchpad: step 3"]), step).messages
    assert after[: len(built.messages) - 1] == built.messages[:-1]
    assert after[len(built.messages) - 1] == msgs[-1]
    assert after[-1].content.endswith("Scratchpad: step 3\n</context>")


def test_working_notes_join_the_run_context_when_the_question_is_last() -> None:
    builder = ContextBuilder(ContextSettings(), 8192)
    built = builder.build(parts(working=["Scratchpad: step 1"]), history(2)[:5])
    assert built.messages[-1].content.startswith("<context>\nCurrent time")
    assert "Scratchpad: step 1\n</context>\n\nquestion 1" in built.messages[-1].content
    assert built.framed is not None and "step 1" not in built.framed[1].context


def test_old_blocks_are_shed_before_anything_is_compressed() -> None:
    """A window that holds the history, but not with every old block re-sent."""
    builder = ContextBuilder(ContextSettings(), 8192)
    msgs = history(12)
    hint = "- " + "a long recalled memory " * 40
    earlier = {
        4 * i: SentContext(msgs[4 * i].content, f"Current time: now\n\n{hint}") for i in range(11)
    }
    framed = [
        Message("user", f"<context>\n{earlier[i].context}\n</context>\n\n{m.content}")
        if i in earlier
        else m
        for i, m in enumerate(msgs)
    ]
    assert builder.budget.level(builder.counter.count_messages(framed)) > 0
    plain = builder.build(parts(), msgs)
    resent = builder.build(parts(earlier=earlier), msgs)
    assert plain.level == 0
    assert resent.level == 0
    assert resent.messages == plain.messages  # every old block dropped, nothing trimmed
    small = builder.build(parts(earlier=dict(list(earlier.items())[:1])), history(3))
    assert "a long recalled memory" in small.messages[1].content  # kept when there is room


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


def test_the_system_message_is_built_once_per_persona_workspace_and_tools() -> None:
    """The prompt template cache: later requests of a session reuse the system message;
    another tool set is another template."""
    from shiyi.index.cache_stats import PROMPT, counter
    from shiyi.llm.types import ToolSpec

    builder = ContextBuilder(ContextSettings(), 8192)
    stats = counter(PROMPT)
    hits, misses = stats.hits, stats.misses
    first = builder.build(parts(), history(2)).messages[0]
    second = builder.build(parts(memory_hint="changes per run"), history(3)).messages[0]
    assert second is first and (stats.hits, stats.misses) == (hits + 1, misses + 1)
    tool = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})
    with_tool = builder.build(parts(tools=[tool]), history(2)).messages[0]
    assert "read_file" in with_tool.content and "read_file" not in first.content
    assert stats.misses == misses + 2
