"""Seeding stores: one record factory and one "import and wait" step, so each test says only
what matters to it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shiyi.llm.types import Message
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory
from shiyi.sessions.log import SessionLog

BASE_TS = 1_700_000_000.0


def turn(
    i: int,
    text: str | None = None,
    *,
    session: str = "s1",
    run: str = "r1",
    ts: float | None = None,
    step: float = 60.0,
    **fields: Any,
) -> EventRecord:
    """The ``i``-th user turn of ``session``: id ``e{i}``, ``step`` seconds after the one
    before, text ``turn {i}`` unless given; ``fields`` set any other field (``id`` too)."""
    values: dict[str, Any] = {
        "id": f"e{i}",
        "session_id": session,
        "run_id": run,
        "ts": BASE_TS + i * step if ts is None else ts,
        "role": "user",
        "content": f"turn {i}" if text is None else text,
        "segment_type": "user_message",
        "iteration": i,
    }
    return EventRecord(**(values | fields))


def seed(memory: Memory, events: Sequence[EventRecord], *, timeout: float = 120) -> None:
    """Import ``events`` and wait until the worker has indexed, embedded and linked them."""
    memory.import_events(events)
    assert memory.worker.drain(timeout=timeout), "the memory worker did not finish in time"


def log_and_record(
    memory: Memory, log: SessionLog, session: str, run: str, message: Message
) -> int:
    """What the agent does with a message: log it, then queue it for memory under the log's
    epoch; returns its log row."""
    row = log.append(session, message, run_id=run)
    memory.record_message(
        message,
        message_id=row,
        session_id=session,
        run_id=run,
        iteration=0,
        log_epoch=log.identity.epoch_for(row),
    )
    return row
