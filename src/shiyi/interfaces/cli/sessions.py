"""``shiyi sessions list|show``."""

from __future__ import annotations

import time

import typer

from shiyi.config import Settings
from shiyi.sessions.log import SessionLog


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def print_sessions(settings: Settings, limit: int) -> int:
    log = SessionLog(settings.sessions_db)
    rows = log.list_sessions(limit)
    if not rows:
        typer.echo("No sessions yet. Start one with `shiyi chat`.")
        return 0
    typer.echo(f"{'ID':<18} {'UPDATED':<17} {'MSGS':>5}  TITLE")
    for info in rows:
        typer.echo(
            f"{info.id:<18} {_when(info.updated_at):<17} {info.message_count:>5}  {info.title}"
        )
    return 0


def print_session(settings: Settings, session_id: str) -> int:
    log = SessionLog(settings.sessions_db)
    info = log.find_session(session_id)
    typer.echo(f"session {info.id} · {info.title or '(untitled)'} · {_when(info.created_at)}")
    typer.echo(f"workspace {info.workspace}")
    for run in log.runs(info.id):
        typer.echo(
            f"run {run.id} · {run.status} · {run.iterations} iterations · "
            f"{run.prompt_tokens}+{run.completion_tokens} tokens"
        )
    typer.echo("")
    for entry in log.messages(info.id):
        message = entry.message
        head = message.role if message.role != "tool" else f"tool {message.name}"
        body = message.content if len(message.content) < 600 else message.content[:600] + " …"
        typer.echo(f"[{_when(entry.created_at)}] {head}: {body}")
        for call in message.tool_calls:
            typer.echo(f"    → {call.name}({call.arguments[:200]})")
    return 0
