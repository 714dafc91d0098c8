"""Hard-deleting from the session log (``shiyi memory forget``): messages and whole sessions.

A forgotten message also takes the run goal and session title that quote it; freed bytes are
zeroed (``secure_delete``).  Kept apart from :mod:`shiyi.sessions.log`, whose
:meth:`~shiyi.sessions.log.SessionLog.forget_messages` and
:meth:`~shiyi.sessions.log.SessionLog.forget_sessions` call these under the log's lock, because
erasing is a rare, careful path unlike the log's everyday appends and reads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from shiyi.sessions.log_schema import transaction

_CHUNK = 500  # stays far below SQLite's limit on bound parameters


def delete_messages(db: sqlite3.Connection, messages: Sequence[tuple[int, str]]) -> int:
    """Hard-delete these ``(row, session)`` messages (``shiyi memory forget``) and blank
    the run goals and session titles that quote them; freed bytes are zeroed.  A row is
    deleted only in its session: a row number of an older log (moved aside) names
    another message here.  Returns how many went."""
    wanted = list(dict.fromkeys(messages))
    removed = 0
    db.execute("PRAGMA secure_delete=ON")
    with transaction(db):
        for row_id, session in wanted:
            rows = db.execute(
                "DELETE FROM messages WHERE id = ? AND session_id = ?"
                " RETURNING session_id, run_id, content",
                (row_id, session),
            ).fetchall()
            removed += len(rows)
            for session_id, run_id, content in rows:
                _unquote(db, str(session_id), run_id, str(content))
    return removed


def _unquote(db: sqlite3.Connection, session_id: str, run_id: str | None, content: str) -> None:
    """Blank the run goal and the session title taken from a forgotten message."""
    if run_id:
        db.execute("UPDATE runs SET goal='' WHERE id=? AND goal=?", (run_id, content))
    row = db.execute("SELECT title FROM sessions WHERE id=?", (session_id,)).fetchone()
    title = str(row[0]) if row else ""
    if title and " ".join(content.split()).startswith(title.removesuffix("…")):
        db.execute("UPDATE sessions SET title='' WHERE id=?", (session_id,))


def delete_sessions(
    db: sqlite3.Connection, session_ids: Sequence[str], *, user_id: str | None = None
) -> tuple[int, int]:
    """Hard-delete these sessions and, given ``user_id``, every session of that user,
    with their runs and messages; freed bytes are zeroed.  Returns (sessions, messages)."""
    wanted = set(session_ids)
    if user_id is not None:
        rows = db.execute("SELECT id FROM sessions WHERE user_id=?", (user_id,))
        wanted.update(str(r[0]) for r in rows)
    ids = sorted(wanted)
    sessions = messages = 0
    db.execute("PRAGMA secure_delete=ON")
    with transaction(db):
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            messages += int(
                db.execute(
                    f"SELECT COUNT(*) FROM messages WHERE session_id IN ({_marks(chunk)})",
                    chunk,
                ).fetchone()[0]
            )
            cursor = db.execute(f"DELETE FROM sessions WHERE id IN ({_marks(chunk)})", chunk)
            sessions += cursor.rowcount
    return sessions, messages


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))
