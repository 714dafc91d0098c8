"""Cut logged chat messages into anchored Event segments (no LLM, no embedding).

A logged message's events are named after its session-log row: ``ev_<epoch>_<row>_<segment>``.
The epoch is the log's own random name (:attr:`shiyi.sessions.records.LogIdentity.epoch`), so a
log moved aside and started again (rows from 1) names its messages apart from the old log's,
whose turns memory keeps.  Logs written before epochs existed named their events
``ev_<row>_<segment>``: the rows they held then keep those ids (the log remembers up to which
row, ``legacy_through``), so stores need no migration and their turns stay forgettable.

Ids a caller supplies (imports) may never take this shape (:func:`is_internal_id`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from shiyi.llm.types import Message
from shiyi.memory.models import EventRecord, SegmentType

_EVENT_ID = re.compile(r"^ev_(?:([0-9a-z]+)_)?(\d+)_(\d+)$")
_INTERNAL_ID = re.compile(r"^(?:ev|fact|ses|run)_[0-9a-z_]*$")
"""Every id shiyi makes itself: events (above), facts, sessions and runs (``<kind>_<hex>``)."""

# Memory keeps what matters of a tool result; the full text stays in the session log.
MAX_SEGMENT_CHARS = 4000


def _clip(text: str) -> str:
    if len(text) <= MAX_SEGMENT_CHARS:
        return text
    return text[: MAX_SEGMENT_CHARS - 20] + " …[clipped]"


def message_segments(message: Message) -> list[tuple[SegmentType, str]]:
    """The (segment type, text) pieces of one message, in reading order."""
    if message.role == "user":
        return [("user_message", message.content)]
    if message.role == "tool":
        return [("tool_result", _clip(f"{message.name or 'tool'} -> {message.content}"))]
    if message.role != "assistant":
        return []
    pieces: list[tuple[SegmentType, str]] = []
    if message.reasoning:
        pieces.append(("reasoning", _clip(message.reasoning)))
    if message.content:
        pieces.append(("response", message.content))
    pieces += [("tool_call", _clip(f"{c.name}({c.arguments})")) for c in message.tool_calls]
    return pieces


def to_events(
    message: Message,
    *,
    message_id: int,
    session_id: str,
    run_id: str,
    iteration: int,
    first_segment: int,
    ts: float,
    user_id: str = "default",
    agent_id: str = "shiyi",
    log_epoch: str = "",
) -> list[EventRecord]:
    """Events with ids derived from the session-log row, so re-ingesting is idempotent.
    ``log_epoch`` is the log's epoch for the row ("" for a row logged before epochs)."""
    return [
        EventRecord(
            id=event_id(message_id, index, log_epoch),
            session_id=session_id,
            run_id=run_id,
            ts=ts,
            role=message.role,
            content=text,
            segment_type=kind,
            iteration=iteration,
            segment=first_segment + index,
            user_id=user_id,
            agent_id=agent_id,
        )
        for index, (kind, text) in enumerate(message_segments(message))
        if text.strip()
    ]


def event_id(row: int, index: int, log_epoch: str = "") -> str:
    """The id of segment ``index`` of log row ``row`` (legacy form without an epoch)."""
    return f"ev_{log_epoch}_{row}_{index}" if log_epoch else f"ev_{row}_{index}"


@dataclass(frozen=True, slots=True)
class LoggedEventId:
    """What an event id made from a session-log row says: its log, row and segment."""

    epoch: str
    """"" for the legacy form ``ev_<row>_<segment>``."""
    row: int
    segment: int


def parse_event_id(value: str) -> LoggedEventId | None:
    """The log row behind ``value``, or None for an id not made from a log row."""
    match = _EVENT_ID.match(value)
    if match is None:
        return None
    epoch, row, segment = match.groups()
    return LoggedEventId(epoch or "", int(row), int(segment))


def logged_rows(ids: Iterable[str], epoch: str, legacy_through: int) -> list[int]:
    """The rows of the log ``(epoch, legacy_through)`` that these event ids were made from:
    an id of another log (another epoch, or a legacy id beyond the rows the log held when
    it got its epoch) names a row of that other log, never one of this one."""
    rows: list[int] = []
    for value in ids:
        parsed = parse_event_id(value)
        if parsed is None:
            continue
        if parsed.epoch == epoch or (not parsed.epoch and parsed.row <= legacy_through):
            rows.append(parsed.row)
    return rows


def is_internal_id(value: str) -> bool:
    """Whether ``value`` has the shape of an id shiyi makes (an event, fact, session or run):
    names a caller supplies must not, or a later internal write would find its id taken."""
    return _INTERNAL_ID.match(value) is not None
