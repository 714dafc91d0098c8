"""What the session log hands back: its rows read into records, and who owns a session.

Sessions, runs and logged messages as frozen records, the log's identity (the epoch its memory
events are named by) and a session's owner with the SQL condition that selects its sessions.
Kept apart from :mod:`shiyi.sessions.log` (the SQLite file and its reads and writes) because
the agent, the server's wire format and memory's reconciliation use these records without
opening a log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from shiyi.llm.types import Message, ToolCall


@dataclass(slots=True, frozen=True)
class LogIdentity:
    """How this log's message rows name their memory events (see
    :mod:`shiyi.memory.intake.segments`): ``epoch`` is random, made when the log is, so a new log
    (rows from 1 again) never names a row as an older log did; rows up to ``legacy_through``
    were logged before epochs existed and keep their old, epoch-less event ids."""

    epoch: str
    legacy_through: int

    def epoch_for(self, row: int) -> str:
        """The epoch in the event ids of ``row`` ("" for the legacy form)."""
        return "" if row <= self.legacy_through else self.epoch


@dataclass(slots=True, frozen=True)
class SessionInfo:
    id: str
    title: str
    created_at: float
    updated_at: float
    workspace: str
    message_count: int = 0


@dataclass(slots=True, frozen=True)
class RunRecord:
    id: str
    session_id: str
    goal: str
    status: str
    started_at: float
    ended_at: float | None
    iterations: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    detail: str


@dataclass(slots=True, frozen=True)
class LoggedMessage:
    id: int
    run_id: str | None
    iteration: int
    created_at: float
    message: Message


@dataclass(slots=True, frozen=True)
class RunMessageOwner:
    """A logged message's session and that session's owner (the column default 'default'
    for sessions logged before owners were recorded)."""

    session_id: str
    user_id: str
    agent_id: str


@dataclass(slots=True, frozen=True)
class SessionOwner:
    """Who a session belongs to; ``legacy`` also claims the sessions recorded before owners
    were (their user_id is the column default, 'default'): the config's own identity."""

    user_id: str = "default"
    agent_id: str = "shiyi"
    legacy: bool = False

    def where(self, alias: str = "") -> tuple[str, tuple[object, ...]]:
        """An SQL condition on the sessions table (``alias.`` prefixed) and its parameters."""
        col = f"{alias}." if alias else ""
        cond = f"(({col}user_id=? AND {col}agent_id=?) OR (? AND {col}user_id='default'))"
        return cond, (self.user_id, self.agent_id, int(self.legacy))


def logged_message(row: tuple[object, ...]) -> LoggedMessage:
    """A ``messages`` row (id, run, iteration, time, then the message's columns) as a record."""
    (msg_id, run_id, iteration, created, role, content, calls, call_id, name, reasoning) = row
    tool_calls = tuple(ToolCall(*c) for c in json.loads(str(calls))) if calls else ()
    message = Message(
        role=role,  # type: ignore[arg-type]
        content=str(content),
        tool_calls=tool_calls,
        tool_call_id=call_id if isinstance(call_id, str) else None,
        name=name if isinstance(name, str) else None,
        reasoning=reasoning if isinstance(reasoning, str) else None,
    )
    return LoggedMessage(
        int(msg_id),  # type: ignore[call-overload]
        run_id if isinstance(run_id, str) else None,
        int(iteration),  # type: ignore[call-overload]
        float(created),  # type: ignore[arg-type]
        message,
    )
