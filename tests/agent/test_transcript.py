"""A message goes one way down: the transcript logs it, then queues it for memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.agent.transcript import Transcript
from shiyi.llm.types import Message
from shiyi.sessions.log import SessionLog


class Sink:
    """Records what memory would be given, and what the log held at that moment."""

    def __init__(self, log: SessionLog, *, fail: bool = False) -> None:
        self.log = log
        self.fail = fail
        self.calls: list[tuple[str, int, str, str, int, list[int]]] = []
        self.epochs: list[str] = []

    def record_message(
        self,
        message: Message,
        *,
        message_id: int,
        session_id: str,
        run_id: str,
        iteration: int,
        log_epoch: str = "",
    ) -> None:
        logged = [m.id for m in self.log.messages(session_id)]
        self.calls.append((message.content, message_id, session_id, run_id, iteration, logged))
        self.epochs.append(log_epoch)
        if self.fail:
            raise RuntimeError("the memory queue is gone")


@pytest.fixture
def log(tmp_path: Path) -> SessionLog:
    opened = SessionLog(tmp_path / "sessions.sqlite3")
    yield opened  # type: ignore[misc]
    opened.close()


def test_a_run_message_is_logged_before_memory_gets_it_with_its_row(log: SessionLog) -> None:
    session = log.create_session()
    sink = Sink(log)
    transcript = Transcript(log, session, memory=sink)
    transcript.append(Message("user", "my cat is called Mochi"), run_id="run_1", iteration=0)
    transcript.append(Message("assistant", "noted"), run_id="run_1", iteration=1)
    [first, second] = sink.calls
    assert first[:5] == ("my cat is called Mochi", first[1], session, "run_1", 0)
    assert first[5] == [first[1]]  # in the log, under the id memory anchors to
    assert second[0] == "noted" and second[4] == 1 and second[5] == [first[1], second[1]]
    assert sink.epochs == [log.identity.epoch] * 2  # the ids name this log's rows


def test_messages_outside_a_run_stay_out_of_memory(log: SessionLog) -> None:
    session = log.create_session()
    sink = Sink(log)
    Transcript(log, session, memory=sink).append(Message("system", "resumed"))
    assert sink.calls == []
    assert [m.message.content for m in log.messages(session)] == ["resumed"]


def test_a_failing_memory_never_loses_the_message(log: SessionLog) -> None:
    session = log.create_session()
    transcript = Transcript(log, session, memory=Sink(log, fail=True))
    transcript.append(Message("user", "still here"), run_id="run_1")
    assert [m.content for m in transcript.all()] == ["still here"]
    reopened = Transcript(log, session)
    assert [m.content for m in reopened.all()] == ["still here"]
