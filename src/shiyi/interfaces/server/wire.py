"""The server's records turned into the wire models of :mod:`shiyi.api.schemas`.

The conversions live here, beside the routes, so the wire models (and the client that
imports them) know nothing of the stores the records come from.
"""

from __future__ import annotations

from shiyi.api.schemas import MessageOut, RunOut, SessionOut, ToolCallOut
from shiyi.memory.operations.wire import event_out, fact_detail, fact_out, health_detail, hit_out
from shiyi.sessions.records import LoggedMessage, RunRecord, SessionInfo


def session_out(info: SessionInfo) -> SessionOut:
    return SessionOut(
        id=info.id,
        title=info.title,
        created_at=info.created_at,
        updated_at=info.updated_at,
        workspace=info.workspace,
        message_count=info.message_count,
    )


def message_out(logged: LoggedMessage) -> MessageOut:
    message = logged.message
    return MessageOut(
        id=logged.id,
        role=message.role,
        content=message.content,
        run_id=logged.run_id,
        iteration=logged.iteration,
        created_at=logged.created_at,
        tool_calls=[
            ToolCallOut(id=c.id, name=c.name, arguments=c.arguments) for c in message.tool_calls
        ],
        tool_call_id=message.tool_call_id,
        name=message.name,
    )


def run_out(record: RunRecord) -> RunOut:
    return RunOut(
        run_id=record.id,
        session_id=record.session_id,
        status=record.status,
        goal=record.goal,
        iterations=record.iterations,
        detail=record.detail,
    )


__all__ = [
    "event_out",
    "fact_detail",
    "fact_out",
    "health_detail",
    "hit_out",
    "message_out",
    "run_out",
    "session_out",
]
