"""A session log moved aside (or lost) and started again, on both backends: its rows restart
at 1, yet the new messages are remembered apart from the old log's turns, forgetting an old
turn never deletes the new log's row of the same number, and reconciliation queues what a
kill lost under the new log's ids (issue 29, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.config import Settings
from shiyi.llm.types import Message
from shiyi.memory.intake.reconcile import reconcile
from shiyi.memory.intake.segments import event_id
from shiyi.memory.service import Memory
from shiyi.sessions.log import SessionLog


@pytest.fixture
def memory(vectorless_memory: Memory) -> Memory:
    return vectorless_memory


def said(memory: Memory, log: SessionLog, text: str, *, queue: bool = True) -> str:
    """What the agent does (log, then queue for memory); returns the turn's id."""
    session = log.create_session()
    run = log.start_run(session, text)
    row = log.append(session, Message("user", text), run_id=run)
    epoch = log.identity.epoch_for(row)
    if queue:
        memory.record_message(
            Message("user", text),
            message_id=row,
            session_id=session,
            run_id=run,
            iteration=0,
            log_epoch=epoch,
        )
    return event_id(row, 0, epoch)


def moved_aside(path: Path) -> SessionLog:
    path.rename(path.with_name(path.name + ".aside"))
    return SessionLog(path)


def test_a_new_log_names_its_rows_apart_from_the_old_ones(
    memory: Memory, vectorless_settings: Settings
) -> None:
    path = vectorless_settings.sessions_db
    old = SessionLog(path)
    old_turn = said(memory, old, "the old walrus plan")
    old.close()
    new = moved_aside(path)
    new_turn = said(memory, new, "the new narwhal plan")
    assert memory.worker.drain(timeout=60)
    assert new_turn != old_turn and new.last_message_id() == 1  # rows restarted
    assert [h.id for h in memory.search("narwhal", mode="keyword")] == [new_turn]
    assert [h.id for h in memory.search("walrus", mode="keyword")] == [old_turn]

    report = memory.forget_ids([old_turn])
    assert (report.events, report.messages) == (1, 0)  # row 1 here is another message
    assert [m.message.content for m in new.messages(new.list_sessions()[0].id)] == [
        "the new narwhal plan"
    ]
    new.close()


def test_reconcile_queues_a_new_logs_lost_messages_under_its_ids(
    memory: Memory, vectorless_settings: Settings
) -> None:
    path = vectorless_settings.sessions_db
    old = SessionLog(path)
    said(memory, old, "the old walrus plan")
    old.close()
    assert memory.worker.drain(timeout=60)
    new = moved_aside(path)
    lost = said(memory, new, "the lost narwhal plan", queue=False)  # killed before queueing
    assert reconcile(new, memory.store, memory.jobs).queued == 1
    assert memory.worker.drain(timeout=60)
    assert [h.id for h in memory.search("narwhal", mode="keyword")] == [lost]
    new.close()


def test_rows_logged_before_epochs_keep_their_ids(tmp_path: Path) -> None:
    """A log written by an older shiyi gets its epoch on first open; the rows it held then
    keep the epoch-less ids the stores already use (no migration)."""
    import sqlite3

    path = tmp_path / "sessions.sqlite3"
    SessionLog(path).close()
    with sqlite3.connect(path) as db:  # as the older shiyi left it: rows, no epoch
        db.execute("DELETE FROM meta WHERE key IN ('event_epoch', 'legacy_through')")
        db.execute("INSERT INTO sessions VALUES ('s', '', 0, 0, '', 'default', 'shiyi')")
        db.executemany(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES ('s', ?, ?, 0)",
            [("user", "a"), ("assistant", "b")],
        )
    log = SessionLog(path)
    row = log.append("s", Message("user", "c"))
    assert (log.identity.epoch_for(2), log.identity.legacy_through) == ("", 2)
    assert log.identity.epoch_for(row) == log.identity.epoch != ""
    log.close()
    again = SessionLog(path)
    assert again.identity == log.identity  # made once, kept
    again.close()
