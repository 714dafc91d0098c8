"""The session log's file: its tables, its schema version and the checks made on opening it.

The DDL, the migration that creates it (refusing a log written by a newer shiyi), the epoch
the log's memory events are named by (made on the first open), the refusal of a 0-byte file
and the write transaction.  Kept apart from :mod:`shiyi.sessions.log`, whose
:class:`~shiyi.sessions.log.SessionLog` opens the file with them and then only reads and writes
rows.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shiyi.errors import StorageError
from shiyi.sessions.records import LogIdentity

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


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back if the block raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Create the tables if missing and record (or check) the schema version."""
    db.executescript(_SCHEMA)  # idempotent DDL; executescript commits by itself
    with transaction(db):
        row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif int(row[0]) > SCHEMA_VERSION:
            raise StorageError(
                f"the session log {path} was written by a newer shiyi "
                f"(schema {row[0]} > {SCHEMA_VERSION}); upgrade shiyi to open it."
            )


def read_identity(db: sqlite3.Connection) -> LogIdentity:
    """The log's epoch, made on its first open by a shiyi that names events by epoch
    (the rows already logged then keep their legacy ids)."""
    with transaction(db):
        rows = dict(
            db.execute(
                "SELECT key, value FROM meta WHERE key IN ('event_epoch', 'legacy_through')"
            ).fetchall()
        )
        if "event_epoch" not in rows:
            last = db.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()
            rows = {"event_epoch": secrets.token_hex(5), "legacy_through": str(last[0])}
            db.executemany("INSERT INTO meta VALUES (?, ?)", list(rows.items()))
    return LogIdentity(str(rows["event_epoch"]), int(rows.get("legacy_through") or 0))


def refuse_empty(path: Path) -> None:
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
