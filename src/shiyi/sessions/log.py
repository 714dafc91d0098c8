"""The raw session log in SQLite: sessions, runs and every message, written as it happens.

This is the source of truth for resuming a session after the process dies; the graph memory
is derived from it.  Writes are small and committed at once (WAL, ``synchronous=NORMAL``), so
a killed process loses at most the message being produced.

The file's tables, migration and epoch are :mod:`shiyi.sessions.log_schema`'s, the records read
from its rows :mod:`shiyi.sessions.records`'s, and hard deletes :mod:`shiyi.sessions.forget_rows`'s.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from shiyi.errors import SessionNotFound, StorageError
from shiyi.llm.types import Message
from shiyi.sessions.forget_rows import delete_messages, delete_sessions
from shiyi.sessions.log_schema import migrate, read_identity, refuse_empty, transaction
from shiyi.sessions.records import (
    LoggedMessage,
    RunMessageOwner,
    RunRecord,
    SessionInfo,
    SessionOwner,
    logged_message,
)

P = ParamSpec("P")
R = TypeVar("R")


def _locked(
    method: Callable[Concatenate[SessionLog, P], R],
) -> Callable[Concatenate[SessionLog, P], R]:
    """Serialise use of the one connection (a server touches it from worker threads too)."""

    @functools.wraps(method)
    def wrapper(self: SessionLog, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._lock:
            if self._closed:
                raise StorageError(f"the session log {self.path} is closed")
            return method(self, *args, **kwargs)

    return wrapper


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


class SessionLog:
    """One SQLite file; safe to open from several processes (SQLite locks, busy timeout)
    and to share between threads (one connection, used under a lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._closed = False
        path.parent.mkdir(parents=True, exist_ok=True)
        refuse_empty(path)
        try:
            self._db = sqlite3.connect(
                path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            migrate(self._db, path)
            self.identity = read_identity(self._db)
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"the session log {path} cannot be opened ({exc}). If it is corrupt, restore "
                f"it from a backup, or move it aside (mv {path} {path}.damaged) and shiyi "
                "starts a new one: memory keeps every turn it remembered, and the new log's "
                "messages are remembered apart from them (only resuming the old sessions needs "
                "the old log)."
            ) from exc

    @_locked
    def mark_interrupted(self, session_id: str) -> int:
        """Close runs left 'running' by a process that died; returns how many there were."""
        cursor = self._db.execute(
            "UPDATE runs SET status='interrupted', ended_at=?, detail='the process stopped "
            "before the run ended' WHERE session_id=? AND status='running'",
            (time.time(), session_id),
        )
        return cursor.rowcount

    @_locked
    def interrupt_running(self) -> int:
        """Close every run left 'running' (on start, by the process owning the data dir: no
        other process can be running them); returns how many there were."""
        cursor = self._db.execute(
            "UPDATE runs SET status='interrupted', ended_at=?, detail='the process stopped "
            "before the run ended' WHERE status='running'",
            (time.time(),),
        )
        return cursor.rowcount

    def close(self) -> None:
        """Idempotent; later calls of other methods raise :class:`StorageError`."""
        with self._lock:
            self._closed = True
            self._db.close()

    # --- sessions --------------------------------------------------------------------------

    @_locked
    def create_session(
        self, *, title: str = "", workspace: str = "", owner: SessionOwner | None = None
    ) -> str:
        session_id = new_id("ses")
        now = time.time()
        who = owner or SessionOwner()
        self._db.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at, workspace, user_id,"
            " agent_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, title, now, now, workspace, who.user_id, who.agent_id),
        )
        return session_id

    @_locked
    def get_session(self, session_id: str, *, owner: SessionOwner | None = None) -> SessionInfo:
        """The session; given ``owner``, another owner's session is not found either."""
        cond, params = owner.where("s") if owner is not None else ("1", ())
        row = self._db.execute(
            "SELECT s.id, s.title, s.created_at, s.updated_at, s.workspace, "
            "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) "
            f"FROM sessions s WHERE s.id = ? AND {cond}",
            (session_id, *params),
        ).fetchone()
        if row is None:
            raise SessionNotFound(
                f"no session {session_id!r}; `shiyi sessions list` shows the ids you can use."
            )
        return SessionInfo(*row)

    @_locked
    def find_session(self, prefix: str) -> SessionInfo:
        """A session by full id or unique prefix (as users type them)."""
        rows = self._db.execute(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
            (prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",),
        ).fetchall()
        if len(rows) == 1:
            return self.get_session(rows[0][0])
        if not rows:
            return self.get_session(prefix)
        raise SessionNotFound(f"{prefix!r} matches several sessions; type more of the id.")

    @_locked
    def list_sessions(
        self, limit: int = 50, *, owner: SessionOwner | None = None
    ) -> list[SessionInfo]:
        """Newest first; given ``owner``, only that owner's sessions."""
        cond, params = owner.where("s") if owner is not None else ("1", ())
        rows = self._db.execute(
            "SELECT s.id, s.title, s.created_at, s.updated_at, s.workspace, "
            "(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) "
            f"FROM sessions s WHERE {cond} ORDER BY s.updated_at DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [SessionInfo(*row) for row in rows]

    @_locked
    def set_title(self, session_id: str, title: str) -> None:
        self._db.execute("UPDATE sessions SET title=? WHERE id=?", (title, session_id))

    @_locked
    def delete_session(self, session_id: str) -> None:
        self.get_session(session_id)
        self._db.execute("DELETE FROM sessions WHERE id=?", (session_id,))

    # --- messages --------------------------------------------------------------------------

    @_locked
    def append(
        self, session_id: str, message: Message, *, run_id: str | None = None, iteration: int = 0
    ) -> int:
        now = time.time()
        calls = (
            json.dumps([[c.id, c.name, c.arguments] for c in message.tool_calls])
            if message.tool_calls
            else None
        )
        with transaction(self._db):
            cursor = self._db.execute(
                "INSERT INTO messages (session_id, run_id, iteration, role, content, tool_calls,"
                " tool_call_id, name, reasoning, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    session_id,
                    run_id,
                    iteration,
                    message.role,
                    message.content,
                    calls,
                    message.tool_call_id,
                    message.name,
                    message.reasoning,
                    now,
                ),
            )
            self._db.execute("UPDATE sessions SET updated_at=? WHERE id=?", (now, session_id))
        return int(cursor.lastrowid or 0)

    @_locked
    def messages(self, session_id: str) -> list[LoggedMessage]:
        rows = self._db.execute(
            "SELECT id, run_id, iteration, created_at, role, content, tool_calls, tool_call_id,"
            " name, reasoning FROM messages WHERE session_id=? ORDER BY id",
            (session_id,),
        ).fetchall()
        return [logged_message(row) for row in rows]

    @_locked
    def run_messages_after(self, after: int) -> list[tuple[RunMessageOwner, LoggedMessage]]:
        """Every message, with its session and owner, of the runs that have a message
        logged after row ``after``, oldest first: what memory reconciles on start.  Whole
        runs, because a message's segment numbers continue those of its run's earlier ones."""
        rows = self._db.execute(
            "SELECT m.session_id, s.user_id, s.agent_id, m.id, m.run_id, m.iteration,"
            " m.created_at, m.role, m.content, m.tool_calls, m.tool_call_id, m.name, m.reasoning"
            " FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.run_id IN"
            " (SELECT DISTINCT run_id FROM messages WHERE id > ? AND run_id IS NOT NULL)"
            " ORDER BY m.id",
            (after,),
        ).fetchall()
        return [(RunMessageOwner(*map(str, row[:3])), logged_message(row[3:])) for row in rows]

    @_locked
    def sessions_of(self, rows: Sequence[int]) -> dict[int, str]:
        """The session each of these message rows is in (rows not logged are left out)."""
        found: dict[int, str] = {}
        for row in dict.fromkeys(rows):
            hit = self._db.execute("SELECT session_id FROM messages WHERE id=?", (row,)).fetchone()
            if hit is not None:
                found[row] = str(hit[0])
        return found

    @_locked
    def last_message_id(self) -> int:
        row = self._db.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()
        return int(row[0])

    @_locked
    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    @_locked
    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # --- runs ------------------------------------------------------------------------------

    @_locked
    def start_run(self, session_id: str, goal: str, run_id: str | None = None) -> str:
        run_id = run_id or new_id("run")
        self._db.execute(
            "INSERT INTO runs (id, session_id, goal, status, started_at) "
            "VALUES (?, ?, ?, 'running', ?)",
            (run_id, session_id, goal, time.time()),
        )
        return run_id

    @_locked
    def end_run(
        self,
        run_id: str,
        status: str,
        *,
        iterations: int,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost: float | None = None,
        detail: str = "",
    ) -> None:
        self._db.execute(
            "UPDATE runs SET status=?, ended_at=?, iterations=?, prompt_tokens=?,"
            " completion_tokens=?, cost=?, detail=? WHERE id=?",
            (
                status,
                time.time(),
                iterations,
                prompt_tokens,
                completion_tokens,
                cost,
                detail,
                run_id,
            ),
        )

    @_locked
    def runs(self, session_id: str) -> list[RunRecord]:
        rows = self._db.execute(
            "SELECT id, session_id, goal, status, started_at, ended_at, iterations,"
            " prompt_tokens, completion_tokens, cost, detail FROM runs"
            " WHERE session_id=? ORDER BY started_at",
            (session_id,),
        ).fetchall()
        return [RunRecord(*row) for row in rows]

    @_locked
    def get_run(self, run_id: str) -> RunRecord | None:
        row = self._db.execute(
            "SELECT id, session_id, goal, status, started_at, ended_at, iterations,"
            " prompt_tokens, completion_tokens, cost, detail FROM runs WHERE id=?",
            (run_id,),
        ).fetchone()
        return RunRecord(*row) if row else None

    # --- forgetting ------------------------------------------------------------------------

    @_locked
    def forget_messages(self, messages: Sequence[tuple[int, str]]) -> int:
        """Hard-delete these ``(row, session)`` messages (``shiyi memory forget``) and blank
        the run goals and session titles that quote them; freed bytes are zeroed.  A row is
        deleted only in its session: a row number of an older log (moved aside) names
        another message here.  Returns how many went."""
        return delete_messages(self._db, messages)

    @_locked
    def forget_sessions(
        self, session_ids: Sequence[str], *, user_id: str | None = None
    ) -> tuple[int, int]:
        """Hard-delete these sessions and, given ``user_id``, every session of that user,
        with their runs and messages; freed bytes are zeroed.  Returns (sessions, messages)."""
        return delete_sessions(self._db, session_ids, user_id=user_id)
