from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shiyi.errors import SessionNotFound, StorageError
from shiyi.llm.types import Message, ToolCall
from shiyi.sessions.log import SessionLog
from shiyi.sessions.records import SessionOwner


@pytest.fixture
def log(tmp_path: Path) -> SessionLog:
    return SessionLog(tmp_path / "s.sqlite3")


def test_messages_round_trip_with_tool_calls_and_reasoning(log: SessionLog) -> None:
    sid = log.create_session(title="t")
    call = ToolCall("c1", "read_file", '{"path": "a"}')
    sent = [
        Message("user", "读取 a"),
        Message("assistant", "", (call,), reasoning="need the file"),
        Message("tool", "content", tool_call_id="c1", name="read_file"),
    ]
    for message in sent:
        log.append(sid, message, run_id="r1", iteration=1)
    got = [entry.message for entry in log.messages(sid)]
    assert got == sent
    assert log.get_session(sid).message_count == 3


def test_messages_survive_reopening(tmp_path: Path) -> None:
    first = SessionLog(tmp_path / "s.sqlite3")
    sid = first.create_session()
    first.append(sid, Message("user", "hello"))
    first.close()
    second = SessionLog(tmp_path / "s.sqlite3")
    assert [e.message.content for e in second.messages(sid)] == ["hello"]


def test_find_by_prefix_and_errors(log: SessionLog) -> None:
    sid = log.create_session()
    assert log.find_session(sid[:8]).id == sid
    with pytest.raises(SessionNotFound, match="shiyi sessions list"):
        log.find_session("ses_doesnotexist")


def test_ambiguous_prefix(log: SessionLog) -> None:
    log.create_session()
    log.create_session()
    with pytest.raises(SessionNotFound, match="several sessions"):
        log.find_session("ses_")


def test_runs_and_interrupted_runs(log: SessionLog) -> None:
    sid = log.create_session()
    finished = log.start_run(sid, "a")
    log.end_run(finished, "completed", iterations=2, prompt_tokens=10, completion_tokens=5)
    log.start_run(sid, "b")  # never ended: the process died
    assert log.mark_interrupted(sid) == 1
    statuses = {run.goal: run.status for run in log.runs(sid)}
    assert statuses == {"a": "completed", "b": "interrupted"}


def test_corrupt_file_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StorageError, match="move it aside"):
        SessionLog(path)
    assert path.read_bytes().startswith(b"this is not")  # nothing was overwritten


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    SessionLog(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(StorageError, match="newer shiyi"):
        SessionLog(path)


def test_delete_session_removes_messages(log: SessionLog) -> None:
    sid = log.create_session()
    log.append(sid, Message("user", "x"))
    log.delete_session(sid)
    assert log.messages(sid) == []
    with pytest.raises(SessionNotFound):
        log.get_session(sid)


def test_a_closed_log_says_so(tmp_path: Path) -> None:
    """A run abandoned while the server shuts down meets a clear StorageError, which the
    agent can tell apart, rather than sqlite3's ProgrammingError."""
    log = SessionLog(tmp_path / "s.sqlite3")
    session = log.create_session()
    log.close()
    log.close()  # closing twice is fine
    with pytest.raises(StorageError, match=r"the session log .* is closed"):
        log.get_session(session)


def test_sessions_are_found_and_listed_by_their_owner_only(log: SessionLog) -> None:
    alice, bob = SessionOwner("alice"), SessionOwner("bob")
    mine = log.create_session(title="a", owner=alice)
    theirs = log.create_session(title="b", owner=bob)
    other_agent = log.create_session(title="c", owner=SessionOwner("alice", "reviewer"))
    legacy = log.create_session(title="d")  # before owners: user 'default'
    assert [s.id for s in log.list_sessions(owner=alice)] == [mine]
    assert log.get_session(mine, owner=alice).title == "a"
    for hidden in (theirs, other_agent, legacy):
        with pytest.raises(SessionNotFound, match=f"no session '{hidden}'"):
            log.get_session(hidden, owner=alice)
    configured = SessionOwner("alice", legacy=True)  # the config's identity keeps old sessions
    assert {s.id for s in log.list_sessions(owner=configured)} == {mine, legacy}
    assert len(log.list_sessions()) == 4  # no owner given: every session (the local CLI)
