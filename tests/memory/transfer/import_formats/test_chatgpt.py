"""A ChatGPT data export (conversations.json) read into importable conversations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shiyi.errors import ImportFormatError
from shiyi.memory.transfer.import_claims import check_runs
from shiyi.memory.transfer.importers import detect_and_load
from tests.memory.transfer.import_formats.exports import (
    BEACH,
    CAT,
    GREYHOUND,
    NEXT_DAY,
    OLD_REPLY,
    T0,
    chatgpt_export,
)


def write(tmp_path: Path, data: Any, name: str = "conversations.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_current_branch_in_order_with_each_messages_time(tmp_path: Path) -> None:
    first, _ = detect_and_load(write(tmp_path, chatgpt_export()))
    assert first.session_id == "chatgpt-67ed1f3a-0000-8000-a1b2-c3d4e5f60718"
    assert first.title == "New dog"
    said = [(e.role, e.content, e.ts) for e in first.events]
    assert said == [
        ("user", GREYHOUND, T0),
        ("assistant", "Congratulations on Biscuit!", T0 + 20.75),
        ("user", f"[shared an image]\n{BEACH}", NEXT_DAY),
        ("assistant", "What a lovely photo of Biscuit.", NEXT_DAY + 9),
    ]
    texts = " ".join(e.content for e in first.events)
    # the edited-away and regenerated branches, the hidden context, tool traffic: not imported
    for absent in (CAT, OLD_REPLY, "Sussex", "print(", "execution"):
        assert absent not in texts
    assert all(e.segment_type == "imported" for e in first.events)
    check_runs(first.session_id, first.events)  # the CLI's own check passes


def test_a_run_per_calendar_day_and_stable_ids(tmp_path: Path) -> None:
    path = write(tmp_path, chatgpt_export())
    first = detect_and_load(path)[0]
    session = first.session_id
    assert [e.run_id for e in first.events] == [f"{session}:2024-03-09"] * 2 + [
        f"{session}:2024-03-10"
    ] * 2
    assert [e.iteration for e in first.events] == [0, 1, 0, 1]
    assert [e.id for e in first.events] == [f"{session}:{n}" for n in ("u1", "a1", "u2", "a2")]
    assert [e.id for e in detect_and_load(path)[0].events] == [e.id for e in first.events]


def test_a_message_without_a_time_takes_the_conversations(tmp_path: Path) -> None:
    second = detect_and_load(write(tmp_path, chatgpt_export()))[1]
    assert second.session_id == "chatgpt-old-conversation-1"
    assert [(e.content, e.ts) for e in second.events] == [
        ("Which tent should I pack for Snowdonia?", 1680000000.0),
        ("A four-season tent.", 1680000100.0),
    ]


def test_without_current_node_the_newest_leaf_is_the_chat(tmp_path: Path) -> None:
    export = chatgpt_export()[:1]
    del export[0]["current_node"]
    events = detect_and_load(write(tmp_path, export))[0].events
    assert events[-1].content == "What a lovely photo of Biscuit."


def test_a_file_part_is_named(tmp_path: Path) -> None:
    export = chatgpt_export()[1:]
    node = export[0]["mapping"]["q"]["message"]
    node["content"] = {
        "content_type": "multimodal_text",
        "parts": [{"content_type": "file", "name": "kit-list.pdf"}, "What am I missing?"],
    }
    events = detect_and_load(write(tmp_path, export))[0].events
    assert events[0].content == "[shared a file: kit-list.pdf]\nWhat am I missing?"


def test_a_cycle_in_the_tree_is_a_clear_error(tmp_path: Path) -> None:
    export = chatgpt_export()[1:]
    export[0]["mapping"]["r"]["parent"] = "a"
    with pytest.raises(ImportFormatError, match=r"conversation 0.mapping: expected a tree"):
        detect_and_load(write(tmp_path, export))


def test_a_conversation_of_another_shape_is_named(tmp_path: Path) -> None:
    export = [*chatgpt_export(), {"title": "no mapping"}]
    with pytest.raises(ImportFormatError, match=r"conversation 2: expected a ChatGPT conversation"):
        detect_and_load(write(tmp_path, export))


def test_an_unknown_file_names_the_formats_understood(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError) as caught:
        detect_and_load(write(tmp_path, [{"messages": []}]))
    message = str(caught.value)
    for name in ("JSONL", "LoCoMo", "ChatGPT", "Claude", "conversations.json"):
        assert name in message
    assert "speaker_a/b" not in message  # no longer mistaken for a broken LoCoMo file


def test_a_message_longer_than_a_served_turn_is_split(tmp_path: Path) -> None:
    from shiyi.api.import_schemas import ImportTurnIn

    export = chatgpt_export()[1:]
    long = "log line\n" * 25_000  # 225,000 characters: a pasted log
    export[0]["mapping"]["q"]["message"]["content"]["parts"] = [long]
    events = detect_and_load(write(tmp_path, export))[0].events
    assert "".join(e.content for e in events[:-1]) == long
    assert [e.id.rsplit(":", 1)[1] for e in events] == ["q", "q.part2", "q.part3", "a"]
    assert [e.iteration for e in events] == [0, 1, 2, 3]
    limit = ImportTurnIn.model_fields["content"].metadata[0].max_length
    assert all(len(e.content) <= limit for e in events)
