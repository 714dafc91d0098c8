"""Start-up reconciliation of the session log with memory, on both backends: what a killed
process logged but never queued is queued with the ids, segments and owner the writer
would have given it; what is stored or queued already is left alone."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from shiyi.config import Settings
from shiyi.llm.types import Message, ToolCall
from shiyi.memory.intake.reconcile import WATERMARK, mark_reconciled, reconcile
from shiyi.memory.intake.segments import event_id
from shiyi.memory.intake.worker import INGEST
from shiyi.memory.service import Memory
from shiyi.sessions.log import SessionLog
from tests.support.records import log_and_record


@pytest.fixture
def settings(vectorless_settings: Settings) -> Settings:
    return vectorless_settings


@pytest.fixture
def memory(vectorless_memory: Memory) -> Memory:
    return vectorless_memory


@pytest.fixture
def log(settings: Settings) -> Iterator[SessionLog]:
    opened = SessionLog(settings.sessions_db)
    yield opened
    opened.close()


def _id(log: SessionLog, row: int, segment: int = 0) -> str:
    return event_id(row, segment, log.identity.epoch_for(row))


def test_only_what_memory_never_heard_of_is_queued(memory: Memory, log: SessionLog) -> None:
    session = log.create_session()
    run = log.start_run(session, "deploy")
    stored = log_and_record(memory, log, session, run, Message("user", "deploy the app"))
    assert memory.worker.drain(timeout=60)
    thinking = Message(
        "assistant",
        "Deploying now.",
        reasoning="the user wants a deploy",
        tool_calls=(ToolCall("c1", "bash", '{"cmd": "make deploy"}'),),
    )
    queued = log_and_record(memory, log, session, run, thinking)  # queued, not yet ingested
    # Killed between the log and the queue: two messages memory never heard of.
    result_message = Message("tool", "deployed", tool_call_id="c1", name="bash")
    lost = [
        log.append(session, result_message, run_id=run),
        log.append(session, Message("assistant", "Deployed to prod."), run_id=run),
    ]
    log.append(session, Message("user", "no run, so not memory's"))

    result = reconcile(log, memory.store, memory.jobs)

    assert (result.checked, result.queued, result.events) == (4, 2, 2)
    assert log.get_meta(WATERMARK) == str(log.last_message_id())
    assert memory.worker.drain(timeout=60)
    found = memory.store.get_events(
        [_id(log, stored), *(_id(log, queued, i) for i in range(3)), *(_id(log, r) for r in lost)]
    )
    # Segments continue through the run's iteration as the writer numbers them.
    assert [(e.segment_type, e.segment) for e in sorted(found, key=lambda e: e.segment)] == [
        ("user_message", 0),
        ("reasoning", 1),
        ("response", 2),
        ("tool_call", 3),
        ("tool_result", 4),
        ("response", 5),
    ]
    again = reconcile(log, memory.store, memory.jobs)
    assert (again.checked, again.queued) == (0, 0)


def test_reconciled_messages_keep_their_sessions_owner(
    memory: Memory, log: SessionLog, settings: Settings
) -> None:
    session = log.create_session()
    with sqlite3.connect(settings.sessions_db) as db:  # a session another user owns
        db.execute("UPDATE sessions SET user_id='ann', agent_id='helper' WHERE id=?", (session,))
    run = log.start_run(session, "hi")
    row = log.append(session, Message("user", "hello from ann"), run_id=run)
    assert reconcile(log, memory.store, memory.jobs).queued == 1
    assert memory.worker.drain(timeout=60)
    [event] = memory.store.get_events([_id(log, row)])
    assert (event.user_id, event.agent_id) == ("ann", "helper")


def test_a_clean_close_leaves_nothing_to_compare(memory: Memory, log: SessionLog) -> None:
    session = log.create_session()
    run = log.start_run(session, "x")
    log_and_record(memory, log, session, run, Message("user", "queued in the same call"))
    mark_reconciled(log)
    assert reconcile(log, memory.store, memory.jobs).checked == 0
    assert memory.jobs.pending_count([INGEST]) == 1
