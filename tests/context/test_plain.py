"""The plain answer layout of a guided small model (shiyi.context.plain)."""

from __future__ import annotations

from shiyi.agent.echo import RUN_WORDS
from shiyi.context.plain import MEMORY_LABEL, PLAIN_SYSTEM, plain_request
from shiyi.llm.types import Message, ToolCall


def test_tool_results_memories_and_facts_become_data_before_the_message() -> None:
    read = ToolCall("c1", "read_file", '{"path": "diary.md"}')
    listing = ToolCall("c2", "list_dir", '{"path": "."}')
    history = [
        Message("user", "Good morning"),
        Message("assistant", "Good morning!"),
        Message("user", "Open diary.md, then list the folder."),
        Message("assistant", "", tool_calls=(read, listing)),
        Message("tool", "    1| Tuesday: rain.\n    2| Wednesday: sun.", tool_call_id="c1"),
        Message(
            "tool",
            "./\ndiary.md  (30 B)\n[shiyi] You have made this exact call 3 times.",
            tool_call_id="c2",
            name="list_dir",
        ),
    ]
    system, *earlier, user = plain_request(
        history, memories=["User: my  sister lives in Lyon."], facts=["2 + 2 = 4"]
    )
    assert system == Message(
        "system", f"{PLAIN_SYSTEM}\n{MEMORY_LABEL}\n- User: my sister lives in Lyon."
    )
    assert earlier == history[:2]
    assert user.role == "user"
    assert user.content == (
        "2 + 2 = 4\n\n"
        "diary.md:\nTuesday: rain.\nWednesday: sun.\n\n"
        "Files here:\ndiary.md  (30 B)\n\n"
        "Open diary.md, then list the folder."
    )


def test_without_memories_the_template_keeps_its_own_system_prompt() -> None:
    messages = plain_request([Message("user", "Good evening!")])
    assert messages == [Message("user", "Good evening!")]


def test_no_tool_turn_reaches_the_model_and_old_talk_is_bounded() -> None:
    history = [Message("user", f"message {i}") for i in range(4)]
    history += [
        Message("assistant", "", tool_calls=(ToolCall("c", "grep", "{}"),)),
        Message("tool", "no match", tool_call_id="c", name="grep"),
        Message("assistant", "Nothing found."),
        Message("user", "Thanks!"),
    ]
    messages = plain_request(history)
    assert all(m.role in ("system", "user", "assistant") for m in messages)
    assert not any(m.tool_calls for m in messages)
    assert [m.content for m in messages] == [
        "message 1", "message 2", "message 3", "Nothing found.", "Thanks!",
    ]  # fmt: skip


def test_shiyi_writes_no_run_of_words_a_model_could_echo() -> None:
    """Every label is shorter than the echo check's run, so copying shiyi is impossible."""
    for text in (PLAIN_SYSTEM, MEMORY_LABEL, "Files here:", "read_file returned:"):
        assert len(text.split()) < RUN_WORDS or text == PLAIN_SYSTEM
    assert len(PLAIN_SYSTEM.split(".")[0].split()) < RUN_WORDS


def test_a_huge_memory_or_earlier_message_is_cut_the_request_is_not() -> None:
    """One remembered 100 KB paste made every later request that recalled it overflow a
    small model's 8,192-token context; the request itself is never shortened."""
    huge = "tall " * 20_000
    history = [
        Message("user", huge),
        Message("assistant", "Noted."),
        Message("user", "Write a short poem about a tall giraffe"),
    ]
    request = plain_request(history, memories=[f"My giraffe notes: {huge}", "I like tea"])
    assert sum(len(m.content) for m in request) < 3_000
    assert "- I like tea" in request[0].content  # the other memories keep their place
    assert request[-1].content == "Write a short poem about a tall giraffe"
    asked = plain_request([Message("user", huge)])
    assert asked[-1].content == huge
