from __future__ import annotations

from pathlib import Path

from shiyi.llm.types import Message, ToolCall
from shiyi.memory.intake.segments import (
    MAX_SEGMENT_CHARS,
    LoggedEventId,
    is_internal_id,
    logged_rows,
    parse_event_id,
    to_events,
)
from shiyi.memory.intake.worker import INGEST
from shiyi.memory.intake.writer import MemoryWriter
from shiyi.memory.kuzu.jobs import SqliteJobQueue


def test_assistant_message_splits_into_reasoning_response_and_calls() -> None:
    message = Message(
        "assistant",
        "Let me check.",
        (ToolCall("c1", "grep", '{"pattern": "x"}'), ToolCall("c2", "read_file", "{}")),
        reasoning="I need the file",
    )
    events = to_events(
        message, message_id=7, session_id="s", run_id="r", iteration=2, first_segment=3, ts=5.0
    )
    assert [e.segment_type for e in events] == ["reasoning", "response", "tool_call", "tool_call"]
    assert [e.segment for e in events] == [3, 4, 5, 6]
    assert [e.id for e in events] == ["ev_7_0", "ev_7_1", "ev_7_2", "ev_7_3"]
    assert events[2].content == 'grep({"pattern": "x"})'
    assert events[0].anchor.key() == "r:2:3"


def test_tool_results_are_clipped_for_memory() -> None:
    message = Message("tool", "x" * 50_000, tool_call_id="c", name="bash")
    (event,) = to_events(
        message, message_id=1, session_id="s", run_id="r", iteration=1, first_segment=0, ts=0
    )
    assert event.content.startswith("bash -> xxx")
    assert len(event.content) <= MAX_SEGMENT_CHARS


def test_writer_numbers_segments_within_an_iteration_and_queues_durably(tmp_path: Path) -> None:
    jobs = SqliteJobQueue(tmp_path / "q.sqlite3")
    woken: list[bool] = []
    writer = MemoryWriter(jobs, lambda: woken.append(True))
    first = writer.record(
        Message("assistant", "hi", (ToolCall("c", "t", "{}"),)),
        message_id=1,
        session_id="s",
        run_id="r",
        iteration=1,
    )
    second = writer.record(
        Message("tool", "out", tool_call_id="c", name="t"),
        message_id=2,
        session_id="s",
        run_id="r",
        iteration=1,
    )
    assert [e.segment for e in first + second] == [0, 1, 2]
    assert woken == [True, True]
    queued = jobs.claim([INGEST], limit=10)
    assert [len(j.payload["events"]) for j in queued] == [2, 1]


def test_a_logs_epoch_names_its_rows_apart_from_another_logs() -> None:
    message = Message("user", "hello")
    kw = {"session_id": "s", "run_id": "r", "iteration": 0, "first_segment": 0, "ts": 0.0}
    (legacy,) = to_events(message, message_id=7, **kw)  # type: ignore[arg-type]
    (epoch,) = to_events(message, message_id=7, log_epoch="a1b2c3d4e5", **kw)  # type: ignore[arg-type]
    assert (legacy.id, epoch.id) == ("ev_7_0", "ev_a1b2c3d4e5_7_0")
    assert parse_event_id(epoch.id) == LoggedEventId("a1b2c3d4e5", 7, 0)
    assert parse_event_id(legacy.id) == LoggedEventId("", 7, 0)
    assert parse_event_id("conv-1:D1:3") is None
    # A row of this log (epoch, or legacy up to the rows it held when it got its epoch);
    # another log's ids name no row here.
    ids = ["ev_a1b2c3d4e5_7_0", "ev_3_1", "ev_9_0", "ev_ffffffffff_2_0", "imp_x"]
    assert logged_rows(ids, "a1b2c3d4e5", legacy_through=5) == [7, 3]
    assert logged_rows(ids, "0000000000", legacy_through=0) == []


def test_only_shiyis_own_id_shapes_are_internal() -> None:
    for name in ("ev_7_0", "ev_a1b2c3d4e5_7_0", "fact_0123456789ab", "ses_x", "run_abc_1"):
        assert is_internal_id(name), name
    for name in ("ev_7_0~1a2b3c4d", "conv-1:D1:3", "imp_0123", "event_1", "ev-7-0", "EV_7_0"):
        assert not is_internal_id(name), name
