"""The raw session log in SQLite: sessions, runs and every message, written as it happens.

This is the source of truth for resuming a session after the process dies; the graph memory
is derived from it.  Writes are small and committed at once (WAL, ``synchronous=NORMAL``), so
a killed process loses at most the message being produced.
"""

from __future__ import annotations

import functools
import json
import secrets
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from shiyi.errors import SessionNotFound, StorageError
from shiyi.llm.types import Message, ToolCall

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    workspace TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT 'default',
    agent_id TEXT NOT NULL DEFAULT 'shiyi'
);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    goal TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    iterations INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    run_id TEXT,
    iteration INTEGER NOT NULL DEFAULT 0,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT,
    tool_call_id TEXT,
    name TEXT,
    reasoning TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, id);
CREATE INDEX IF NOT EXISTS runs_by_session ON runs(session_id, started_at);
"""


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
        _refuse_empty(path)
        try:
            self._db = sqlite3.connect(
                path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
            self.identity = self._identity()
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"the session log {path} cannot be opened ({exc}). If it is corrupt, restore "
                f"it from a backup, or move it aside (mv {path} {path}.damaged) and shiyi "
                "starts a new one: memory keeps every turn it remembered, and the new log's "
                "messages are remembered apart from them (only resuming the old sessions needs "
                "the old log)."
            ) from exc

    def _migrate(self) -> None:
        self._db.executescript(_SCHEMA)  # idempotent DDL; executescript commits by itself
        with self._tx():
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                self._db.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
                )
            elif int(row[0]) > SCHEMA_VERSION:
                raise StorageError(
                    f"the session log {self.path} was written by a newer shiyi "
                    f"(schema {row[0]} > {SCHEMA_VERSION}); upgrade shiyi to open it."
                )

    def _identity(self) -> LogIdentity:
        """The log's epoch, made on its first open by a shiyi that names events by epoch
        (the rows already logged then keep their legacy ids)."""
        with self._tx():
            rows = dict(
                self._db.execute(
                    "SELECT key, value FROM meta WHERE key IN ('event_epoch', 'legacy_through')"
                ).fetchall()
            )
            if "event_epoch" not in rows:
                last = self._db.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()
                rows = {"event_epoch": secrets.token_hex(5), "legacy_through": str(last[0])}
                self._db.executemany("INSERT INTO meta VALUES (?, ?)", list(rows.items()))
        return LogIdentity(str(rows["event_epoch"]), int(rows.get("legacy_through") or 0))

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

    @contextmanager
    def _tx(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

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
        with self._tx():
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
        return [_logged(row) for row in rows]

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
        return [(RunMessageOwner(*map(str, row[:3])), _logged(row[3:])) for row in rows]

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
        wanted = list(dict.fromkeys(messages))
        removed = 0
        self._db.execute("PRAGMA secure_delete=ON")
        with self._tx():
            for row_id, session in wanted:
                rows = self._db.execute(
                    "DELETE FROM messages WHERE id = ? AND session_id = ?"
                    " RETURNING session_id, run_id, content",
                    (row_id, session),
                ).fetchall()
                removed += len(rows)
                for session_id, run_id, content in rows:
                    self._unquote(str(session_id), run_id, str(content))
        return removed

    def _unquote(self, session_id: str, run_id: str | None, content: str) -> None:
        """Blank the run goal and the session title taken from a forgotten message."""
        if run_id:
            self._db.execute("UPDATE runs SET goal='' WHERE id=? AND goal=?", (run_id, content))
        row = self._db.execute("SELECT title FROM sessions WHERE id=?", (session_id,)).fetchone()
        title = str(row[0]) if row else ""
        if title and " ".join(content.split()).startswith(title.removesuffix("…")):
            self._db.execute("UPDATE sessions SET title='' WHERE id=?", (session_id,))

    @_locked
    def forget_sessions(
        self, session_ids: Sequence[str], *, user_id: str | None = None
    ) -> tuple[int, int]:
        """Hard-delete these sessions and, given ``user_id``, every session of that user,
        with their runs and messages; freed bytes are zeroed.  Returns (sessions, messages)."""
        wanted = set(session_ids)
        if user_id is not None:
            rows = self._db.execute("SELECT id FROM sessions WHERE user_id=?", (user_id,))
            wanted.update(str(r[0]) for r in rows)
        ids = sorted(wanted)
        sessions = messages = 0
        self._db.execute("PRAGMA secure_delete=ON")
        with self._tx():
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                messages += int(
                    self._db.execute(
                        f"SELECT COUNT(*) FROM messages WHERE session_id IN ({_marks(chunk)})",
                        chunk,
                    ).fetchone()[0]
                )
                cursor = self._db.execute(
                    f"DELETE FROM sessions WHERE id IN ({_marks(chunk)})", chunk
                )
                sessions += cursor.rowcount
        return sessions, messages


_CHUNK = 500  # stays far below SQLite's limit on bound parameters


def _refuse_empty(path: Path) -> None:
    """A log always holds its tables, so a 0-byte file is one that lost them (truncated,
    replaced): SQLite would silently start an empty log in it.  Refused, left untouched."""
    if path.exists() and path.stat().st_size == 0:
        raise StorageError(
            f"the session log {path} is empty (0 bytes): it lost every session and message "
            "it held, and shiyi will not start a new log over it. Fix: restore it from a "
            f"backup; or, to start a new log, move it aside (mv {path} {path}.empty): memory "
            "keeps every turn it remembered, and the new log's messages are remembered apart "
            "from them."
        )


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


def _logged(row: tuple[object, ...]) -> LoggedMessage:
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
