"""A Claude data export (conversations.json) read into importable conversations."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from shiyi.errors import ImportFormatError
from shiyi.memory.transfer.importers import detect_and_load
from tests.memory.transfer.import_formats.exports import claude_export
from tests.memory.transfer.import_formats.test_chatgpt import write


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_text_blocks_attachments_and_times(tmp_path: Path) -> None:
    chat, older = detect_and_load(write(tmp_path, claude_export()))
    assert chat.session_id == "claude-5b1f0c9e-1111-4e2a-9d1c-0a1b2c3d4e5f"
    assert chat.title == "Sourdough starter"
    assert [(e.role, e.content, e.ts) for e in chat.events] == [
        (
            "user",
            "My sourdough starter named Clint smells like acetone\n"
            "[attached a file: feeding-log.txt]",
            at("2024-06-02T08:15:00"),
        ),
        (
            "assistant",
            "Acetone smell means Clint is hungry: feed him.",  # no thinking, no tool traffic
            at("2024-06-02T08:15:31.5"),
        ),
    ]
    assert [e.id for e in chat.events] == [f"{chat.session_id}:m1", f"{chat.session_id}:m2"]
    assert {e.run_id for e in chat.events} == {f"{chat.session_id}:2024-06-02"}
    # an older export: only `text`, offsets in the times, no name
    assert older.title == "claude-c2"
    assert [(e.role, e.content) for e in older.events] == [
        ("user", "Remind me: the bike lock code is 4417"),
        ("assistant", "Noted: 4417."),
    ]
    assert older.events[1].ts == at("2023-11-20T19:00:09")


def test_only_the_branch_ending_at_the_current_leaf(tmp_path: Path) -> None:
    export = claude_export()[1:]
    messages = export[0]["chat_messages"]
    messages[0]["parent_message_uuid"] = "00000000-0000-4000-8000-000000000000"
    messages[1]["parent_message_uuid"] = "o1"
    retry = dict(messages[1], uuid="o2b", text="Saved: the code is 4417.")
    messages.append(retry)
    export[0]["current_leaf_message_uuid"] = "o2b"
    events = detect_and_load(write(tmp_path, export))[0].events
    assert [e.content for e in events] == [
        "Remind me: the bike lock code is 4417",
        "Saved: the code is 4417.",
    ]


def test_an_export_wrapped_in_an_object_is_read_too(tmp_path: Path) -> None:
    wrapped = {"account": {"uuid": "acc-1"}, "conversations": claude_export()}
    assert len(detect_and_load(write(tmp_path, wrapped))) == 2


def test_a_bad_time_names_the_message(tmp_path: Path) -> None:
    export = claude_export()
    export[1]["chat_messages"][1]["created_at"] = "yesterday"
    with pytest.raises(
        ImportFormatError, match=r"conversation 1.chat_messages\[1\].created_at: expected an ISO"
    ):
        detect_and_load(write(tmp_path, export))
