"""The three compression levels; also home of the synthetic histories shared with
test_summaries."""

from __future__ import annotations

import pytest

from shiyi.config.settings import ContextSettings
from shiyi.context.budget import TokenBudget
from shiyi.context.compression import (
    DIGEST_PREFIX,
    SUMMARY_PREFIX,
    apply_summaries,
    block_key,
    blocks_to_summarise,
    digest_and_tail,
    extractive_digest,
    extractive_summary,
    tail_start,
    trim_tool_outputs,
)
from shiyi.llm.tokens import TokenCounter
from shiyi.llm.types import Message, ToolCall


def exchange(i: int, *, tool: bool = False, output_lines: int = 40) -> list[Message]:
    """One user turn, optionally with a tool call and its long result, then an answer."""
    out = [Message("user", f"Question {i}: please check file_{i}.py")]
    if tool:
        call = ToolCall(f"call_{i}", "read_file", f'{{"path": "file_{i}.py"}}')
        out.append(Message("assistant", "", tool_calls=(call,)))
        body = "\n".join(f"line {n} of file_{i}.py: x = {n}" for n in range(output_lines))
        out.append(Message("tool", body, tool_call_id=call.id, name="read_file"))
    out.append(Message("assistant", f"We decided to keep file_{i}.py as is. Result {i}."))
    return out


def history(turns: int, *, tool_every: int = 2) -> list[Message]:
    out: list[Message] = []
    for i in range(turns):
        out += exchange(i, tool=i % tool_every == 0)
    return out


def assert_pairs_intact(messages: list[Message]) -> None:
    """Every tool result follows its call's assistant message, and every call has results."""
    open_calls: set[str] = set()
    for m in messages:
        if m.role == "tool":
            assert m.tool_call_id in open_calls, f"orphan tool result {m.tool_call_id}"
            open_calls.discard(m.tool_call_id or "")
            continue
        assert not open_calls, f"calls without results: {open_calls}"
        open_calls = {c.id for c in m.tool_calls}
    assert not open_calls


@pytest.fixture
def counter() -> TokenCounter:
    return TokenCounter()


def _budget_for(level_fraction: float, used: int) -> TokenBudget:
    """A budget in which ``used`` tokens are ``level_fraction`` of what is available."""
    settings = ContextSettings()
    fixed = settings.system_tokens + settings.prefetch_tokens + settings.reply_reserve_tokens
    return TokenBudget.from_settings(fixed + round(used / level_fraction), settings)


# --- level 1 ---------------------------------------------------------------------------


def test_trim_replaces_old_tool_outputs_only(counter: TokenCounter) -> None:
    messages = history(10)
    trimmed = trim_tool_outputs(messages, keep_last_n=5, counter=counter)
    assert len(trimmed) == len(messages)
    assert trimmed[-5:] == messages[-5:]
    old_results = [m for m in trimmed[:-5] if m.role == "tool"]
    assert old_results
    assert all(
        m.content.startswith("[tool output trimmed: read_file, 40 lines;") for m in old_results
    )
    assert "first line: line 0 of file_0.py" in old_results[0].content
    assert counter.count_messages(trimmed) < counter.count_messages(messages)
    assert_pairs_intact(trimmed)


def test_trim_keeps_tool_output_of_the_newest_turn(counter: TokenCounter) -> None:
    messages = [*history(4), *exchange(99, tool=True)]
    trimmed = trim_tool_outputs(messages, keep_last_n=1, counter=counter)
    # keep_last_n=1 would start inside the newest turn: the tail grows to its user message.
    assert trimmed[-4:] == messages[-4:]


def test_trim_leaves_short_outputs(counter: TokenCounter) -> None:
    messages = [*exchange(0, tool=True, output_lines=1), *history(3)]
    assert trim_tool_outputs(messages, 2, counter)[2] == messages[2]


# --- level 2 ---------------------------------------------------------------------------


def test_blocks_never_split_tool_pairs_and_spare_the_tail() -> None:
    messages = history(30)
    blocks = blocks_to_summarise(messages, block_size=10, keep_last=5)
    assert blocks
    limit = tail_start(messages, 5)
    for block in blocks:
        assert len(block.messages) >= 10
        assert block.messages[0].role != "tool"
        assert block.end <= limit
        assert_pairs_intact(list(block.messages))
        assert block.key == block_key(block.messages)


def test_block_keys_are_stable_as_history_grows() -> None:
    messages = history(20)
    before = [b.key for b in blocks_to_summarise(messages, 10, 5)]
    after = [b.key for b in blocks_to_summarise([*messages, *history(10)], 10, 5)]
    assert after[: len(before)] == before


def test_apply_summaries_uses_ready_ones_only() -> None:
    messages = history(30)
    blocks = blocks_to_summarise(messages, 10, 5)
    ready = {blocks[0].key: "user asked about files 0-3"}
    out = apply_summaries(messages, ready, 10, 5)
    assert out[0] == Message("user", f"{SUMMARY_PREFIX} user asked about files 0-3")
    assert out[1:] == messages[blocks[0].end :]
    assert apply_summaries(messages, {}, 10, 5) == messages
    assert_pairs_intact(out)


def test_summaries_are_not_summarised_again() -> None:
    messages = history(30)
    blocks = blocks_to_summarise(messages, 10, 5)
    out = apply_summaries(messages, {b.key: "s" for b in blocks}, 10, 5)
    assert blocks_to_summarise(out, 10, 5) == []


# --- level 3 ---------------------------------------------------------------------------


def test_digest_and_tail_keeps_newest_user_message_and_pairs() -> None:
    messages = [*history(10), *exchange(50, tool=True)]
    out = digest_and_tail(messages, "## Decisions\n- keep it", keep_last=2)
    assert out[0].content.startswith(DIGEST_PREFIX)
    assert out[1] == Message("user", "Question 50: please check file_50.py")
    assert out[1:] == messages[-4:]
    assert_pairs_intact(out)


# --- thresholds drive the levels --------------------------------------------------------


@pytest.mark.parametrize(("fraction", "expected"), [(0.5, 0), (0.65, 1), (0.8, 2), (0.95, 3)])
def test_each_level_triggers_at_its_threshold(
    counter: TokenCounter, fraction: float, expected: int
) -> None:
    messages = history(40)
    used = counter.count_messages(messages)
    budget = _budget_for(fraction, used)
    level = budget.level(used)
    assert level == expected
    out = _compress(messages, level, counter)
    assert out[-5:] == messages[-5:]
    assert_pairs_intact(out)
    if level:
        assert counter.count_messages(out) < used


def _compress(messages: list[Message], level: int, counter: TokenCounter) -> list[Message]:
    if level >= 3:
        return digest_and_tail(messages, extractive_digest(messages), 5)
    out = messages
    if level >= 2:
        summaries = {b.key: extractive_summary(b.messages) for b in blocks_to_summarise(out, 10, 5)}
        out = apply_summaries(out, summaries, 10, 5)
    if level >= 1:
        out = trim_tool_outputs(out, 5, counter)
    return out


# --- extractive fallbacks --------------------------------------------------------------


def test_extractive_summary_picks_request_decisions_and_conclusion() -> None:
    messages = [
        Message("user", "Please migrate the config loader to TOML."),
        Message("assistant", "Looking at it. The weather is nice."),
        Message("user", "我们决定使用 tomllib。记住端口是 8080。"),
        Message("assistant", "Done: load_settings now reads shiyi.toml."),
    ]
    summary = extractive_summary(messages, max_chars=400)
    assert summary.startswith("Asked: Please migrate the config loader to TOML.")
    assert "我们决定使用 tomllib" in summary
    assert "weather" not in summary
    assert summary.endswith("Outcome: Done: load_settings now reads shiyi.toml.")
    assert extractive_summary(messages, 400) == summary
    assert len(extractive_summary(messages, 60)) <= 60


def test_extractive_digest_sections_and_carry_over() -> None:
    messages = [
        Message("user", "We decided to use SQLite. Todo: write the migration."),
        Message("assistant", "I will always use snake_case names. The port is 8080."),
        Message("user", "我们决定用 pytest。下一步需要写测试。"),
    ]
    digest = extractive_digest(messages, max_chars=2000)
    for section in ("## Decisions", "## Todos", "## Conventions", "## Key facts"):
        assert section in digest
    assert "- We decided to use SQLite." in digest
    assert "- 我们决定用 pytest。" in digest
    assert "- 下一步需要写测试。" in digest
    carried = extractive_digest([Message("user", f"{DIGEST_PREFIX}\n{digest}")], 2000)
    assert carried == digest
    assert len(extractive_digest(messages, 120)) <= 120


def test_keep_nothing_still_keeps_the_newest_user_turn(counter: TokenCounter) -> None:
    messages = [*history(4), *exchange(9, tool=True)]
    assert tail_start(messages, 0) == len(messages) - 4
    assert digest_and_tail(messages, "d", 0)[1:] == messages[-4:]
    assert trim_tool_outputs(messages, 0, counter)[-2] == messages[-2]
