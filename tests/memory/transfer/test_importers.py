"""Importing JSONL transcripts and LoCoMo files, checked against the synthetic generator."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from bench.synthetic import generate, to_jsonl_records

from shiyi.errors import ImportFormatError
from shiyi.memory.transfer.importers import (
    detect_and_load,
    load_jsonl,
    load_locomo,
    locomo_event_id,
    parse_locomo_date,
)


def _write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def samples() -> list[dict[str, Any]]:
    return generate(conversations=3, sessions=4, turns=12, seed=11)


@pytest.fixture
def locomo_file(tmp_path: Path, samples: list[dict[str, Any]]) -> Path:
    return _write_json(tmp_path / "locomo.json", samples)


def test_generate_is_deterministic_and_covers_all_categories() -> None:
    first, again = generate(2, 5, 16, seed=3), generate(2, 5, 16, seed=3)
    assert first == again
    assert first != generate(2, 5, 16, seed=4)
    categories = {item["category"] for sample in first for item in sample["qa"]}
    assert categories == {1, 2, 3, 4, 5}
    texts = [
        t["text"] for s in first for k, v in s["conversation"].items() if k[-1].isdigit() for t in v
    ]
    assert any("出差" in text for text in texts)
    assert any("`user" in text for text in texts)


def test_locomo_counts_and_ids(locomo_file: Path, samples: list[dict[str, Any]]) -> None:
    conversations = load_locomo(locomo_file)
    assert len(conversations) == len(samples)
    for conversation, sample in zip(conversations, samples, strict=True):
        assert conversation.session_id == sample["sample_id"]
        assert len(conversation.events) == 4 * 12
        assert len(conversation.qa) == len(sample["qa"])
        assert conversation.events[0].id == locomo_event_id(sample["sample_id"], "D1:1")
        assert all(e.segment_type == "imported" for e in conversation.events)
        speakers = {sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]}
        assert {e.role for e in conversation.events} == {s.lower() for s in speakers}


def test_evidence_ids_exist_among_events(locomo_file: Path) -> None:
    for conversation in load_locomo(locomo_file):
        ids = {event.id for event in conversation.events}
        for item in conversation.qa:
            if item.category == 5:
                assert item.evidence == []
                assert item.answer == "not mentioned"
            else:
                assert item.evidence
            for dia_id in item.evidence:
                assert locomo_event_id(conversation.session_id, dia_id) in ids
        multi_hop = [item for item in conversation.qa if item.category == 2]
        assert all(len(item.evidence) == 2 for item in multi_hop)


def test_timestamps_follow_session_dates(locomo_file: Path, samples: list[dict[str, Any]]) -> None:
    conversation = load_locomo(locomo_file)[0]
    raw = samples[0]["conversation"]
    previous_start = float("-inf")
    for number in range(1, 5):
        run = [e for e in conversation.events if e.run_id == f"conv-1:session_{number}"]
        start = parse_locomo_date(raw[f"session_{number}_date_time"])
        assert start > previous_start
        assert [e.ts for e in run] == [start + i for i in range(len(run))]
        assert [e.iteration for e in run] == list(range(len(run)))
        previous_start = start


def test_reloading_gives_identical_ids(locomo_file: Path) -> None:
    first = [e.id for c in load_locomo(locomo_file) for e in c.events]
    second = [e.id for c in detect_and_load(locomo_file) for e in c.events]
    assert first == second
    assert len(set(first)) == len(first)


def test_parse_locomo_date() -> None:
    expected = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
    assert parse_locomo_date("1:56 pm on 8 May, 2023") == expected
    assert (
        parse_locomo_date("10:37 am on 27 June, 2023")
        == datetime(2023, 6, 27, 10, 37, tzinfo=UTC).timestamp()
    )


def test_locomo_accepts_adversarial_answer(tmp_path: Path) -> None:
    sample = {
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1_date_time": "10:37 am on 27 June, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
        },
        "qa": [{"question": "q?", "adversarial_answer": "nope", "category": 5}],
    }
    [conversation] = load_locomo(_write_json(tmp_path / "one.json", [sample]))
    assert conversation.session_id == "sample_0"
    assert conversation.qa[0].answer == "nope"
    assert conversation.title == "A & B"


def test_jsonl_iso_and_epoch_timestamps(tmp_path: Path) -> None:
    lines = [
        {"speaker": "Ann", "text": "hello", "timestamp": "2024-03-01T09:00:00Z"},
        {"speaker": "Bob", "text": "hi", "timestamp": 1709283605},
        {"speaker": "Ann", "text": "other chat", "timestamp": 1709283610.5, "session": "s2"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    conversations = load_jsonl(path)
    assert [c.session_id for c in conversations] == ["chat", "s2"]
    first = conversations[0].events
    assert [e.ts for e in first] == [1709283600.0, 1709283605.0]
    assert [e.role for e in first] == ["ann", "bob"]
    assert [e.iteration for e in first] == [0, 1]
    assert first[0].run_id == "chat:2024-03-01"
    assert first[0].id.startswith("imp_")
    assert [e.id for c in load_jsonl(path) for e in c.events] == [
        e.id for c in conversations for e in c.events
    ]
    assert load_jsonl(path, session_id="mine")[0].session_id == "mine"


def test_generated_jsonl_round_trip(tmp_path: Path, samples: list[dict[str, Any]]) -> None:
    path = tmp_path / "gen.jsonl"
    records = to_jsonl_records(samples)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    from_jsonl = detect_and_load(path)
    from_locomo = load_locomo(_write_json(tmp_path / "gen.json", samples))
    assert [e.id for c in from_jsonl for e in c.events] == [
        e.id for c in from_locomo for e in c.events
    ]
    assert [e.ts for c in from_jsonl for e in c.events] == [
        e.ts for c in from_locomo for e in c.events
    ]


@pytest.mark.parametrize(
    ("content", "location"),
    [
        ('{"speaker": "a", "text": "x", "timestamp": 1}\nnot json\n', "line 2"),
        ('{"speaker": "a", "timestamp": 1}\n', "line 1"),
        ('{"speaker": "a", "text": "x", "timestamp": "yesterday"}\n', "line 1"),
        ('{"speaker": "a", "text": "x"}\n', "line 1"),
    ],
)
def test_malformed_jsonl(tmp_path: Path, content: str, location: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportFormatError, match=location) as info:
        load_jsonl(path)
    assert str(path) in str(info.value)


def _sample(session: object, date: object = "1:56 pm on 8 May, 2023") -> dict[str, Any]:
    return {"conversation": {"session_1": session, "session_1_date_time": date}, "qa": []}


@pytest.mark.parametrize(
    ("data", "location"),
    [
        ({"a": 1}, "sample 0.conversation"),
        ([_sample([]), "oops"], "sample 1"),
        ([_sample([{"speaker": "a", "text": "x"}])], r"sample 0.session_1\[0\]"),
        ([_sample([], date="someday")], "sample 0.session_1_date_time"),
        ([_sample("turns")], "sample 0.session_1"),
        ([{**_sample([]), "qa": [{"question": "q"}]}], r"sample 0.qa\[0\]"),
        ([{"conversation": {"speaker_a": "x"}}], "session_N"),
    ],
)
def test_malformed_locomo(tmp_path: Path, data: object, location: str) -> None:
    path = _write_json(tmp_path / "bad.json", data)
    with pytest.raises(ImportFormatError, match=location) as info:
        load_locomo(path)
    assert str(path) in str(info.value)
    assert "expected" in str(info.value)


def test_invalid_json_names_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("[\n{,\n]", encoding="utf-8")
    with pytest.raises(ImportFormatError, match="line 2"):
        detect_and_load(path)


def test_an_export_file_is_named_as_one_not_blamed_for_a_missing_speaker(tmp_path: Path) -> None:
    from shiyi.memory.kuzu.store import EmbeddedStore
    from shiyi.memory.models import EventRecord, FactRecord
    from shiyi.memory.scopes import Viewer
    from shiyi.memory.transfer.export import export_lines

    store = EmbeddedStore(tmp_path / "store", dimension=8, embedding_model="m")
    try:
        store.add_events([EventRecord("e1", "s", "r", 1.0, "user", "hi", "user_message")])
        store.upsert_facts([FactRecord(id="f1", key="", value="I keep bees", user_id="default")])
        path = tmp_path / "backup.jsonl"
        path.write_text("\n".join(export_lines(store, Viewer())) + "\n", encoding="utf-8")
    finally:
        store.close()
    with pytest.raises(ImportFormatError, match="this is a `shiyi memory export` file") as info:
        detect_and_load(path)
    assert "copy the whole data dir" in str(info.value) and "line 1" in str(info.value)
