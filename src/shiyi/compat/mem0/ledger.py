"""What mem0's API promises and shiyi's store does not keep: each memory's mem0 ids and
metadata, its history of changes, and the next turn number of each run.

A small SQLite file beside the store (``<data_dir>/memory/mem0.sqlite3`` by default).  The
memories themselves (text, time, embeddings) stay in shiyi's store; a row here whose memory
was forgotten elsewhere (``shiyi memory forget``) is skipped on read and dropped.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shiyi.errors import StorageError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS owners (
    memory_id TEXT PRIMARY KEY,
    user_id TEXT, agent_id TEXT, run_id TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    role TEXT, actor_id TEXT,
    created_at REAL NOT NULL, updated_at REAL
);
CREATE INDEX IF NOT EXISTS owners_user ON owners(user_id, agent_id, run_id);
CREATE TABLE IF NOT EXISTS history (
    id TEXT PRIMARY KEY,
    memory_id TEXT NOT NULL,
    old_memory TEXT, new_memory TEXT,
    event TEXT NOT NULL,
    created_at REAL NOT NULL, updated_at REAL,
    is_deleted INTEGER NOT NULL DEFAULT 0,
    actor_id TEXT, role TEXT,
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS history_memory ON history(memory_id, seq);
CREATE TABLE IF NOT EXISTS runs (run TEXT PRIMARY KEY, next_turn INTEGER NOT NULL);
"""


@dataclass(slots=True)
class Owner:
    """The mem0 identity of one memory: as given to ``add`` (None where not given)."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    role: str | None = None
    actor_id: str | None = None
    created_at: float = 0.0
    updated_at: float | None = None


class Ledger:
    """Thread-safe (one connection behind a lock); every write is its own transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._seq = 0
        try:
            self._db = sqlite3.connect(
                path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT coalesce(max(seq), 0) FROM history").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"the mem0 ledger {path} cannot be opened ({exc}); move it aside to start a "
                "new one (the memories stay in the store, their mem0 metadata and history go)"
            ) from exc
        self._seq = int(row[0])

    # --- owners ------------------------------------------------------------------------

    def own(self, memory_id: str, owner: Owner) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO owners VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    memory_id,
                    owner.user_id,
                    owner.agent_id,
                    owner.run_id,
                    json.dumps(owner.metadata, default=str),
                    owner.role,
                    owner.actor_id,
                    owner.created_at,
                    owner.updated_at,
                ),
            )

    def owner(self, memory_id: str) -> Owner | None:
        return self.owners([memory_id]).get(memory_id)

    def owners(self, memory_ids: list[str]) -> dict[str, Owner]:
        found: dict[str, Owner] = {}
        with self._lock:
            for start in range(0, len(memory_ids), 500):
                chunk = memory_ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT * FROM owners WHERE memory_id IN ({marks})", chunk
                ).fetchall()
                for row in rows:
                    found[row[0]] = Owner(
                        row[1], row[2], row[3], json.loads(row[4]), row[5], row[6], row[7], row[8]
                    )
        return found

    def touch(self, memory_id: str, at: float) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE owners SET updated_at = ? WHERE memory_id = ?", (at, memory_id)
            )

    # --- history -----------------------------------------------------------------------

    def record(
        self,
        memory_id: str,
        event: str,
        old: str | None,
        new: str | None,
        *,
        actor_id: str | None = None,
        role: str | None = None,
    ) -> None:
        now = time.time()
        with self._lock:
            self._seq += 1
            self._db.execute(
                "INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    str(uuid.uuid4()),
                    memory_id,
                    old,
                    new,
                    event,
                    now,
                    now if event != "ADD" else None,
                    int(event == "DELETE"),
                    actor_id,
                    role,
                    self._seq,
                ),
            )

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, memory_id, old_memory, new_memory, event, created_at, updated_at,"
                " is_deleted, actor_id, role FROM history WHERE memory_id = ? ORDER BY seq",
                (memory_id,),
            ).fetchall()
        names = ("id", "memory_id", "old_memory", "new_memory", "event", "created_at")
        out = []
        for row in rows:
            entry: dict[str, Any] = dict(zip(names, row[:6], strict=True))
            entry["created_at"] = _iso(row[5])
            entry["updated_at"] = _iso(row[6])
            entry["is_deleted"] = bool(row[7])
            entry["actor_id"], entry["role"] = row[8], row[9]
            out.append(entry)
        return out

    def forget(self, memory_ids: list[str]) -> None:
        """A deleted memory's metadata goes, and its history keeps the events but not the
        words: shiyi's forget reaches every copy of what was said."""
        with self._lock:
            for start in range(0, len(memory_ids), 500):
                chunk = memory_ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                self._db.execute(f"DELETE FROM owners WHERE memory_id IN ({marks})", chunk)
                self._db.execute(
                    "UPDATE history SET old_memory = NULL, new_memory = NULL"
                    f" WHERE memory_id IN ({marks})",
                    chunk,
                )

    @contextmanager
    def kept(self, memory_ids: list[str], *, words: bool = True) -> Iterator[None]:
        """Keep these memories' history through a native forget, which erases their rows.
        A rewrite (``words``) keeps everything: the memory is still the same mem0 memory
        afterwards.  A delete keeps the events and not the words, as ``forget`` does."""
        with self._lock:
            owners, history = [], []
            for start in range(0, len(memory_ids), 500):
                chunk = memory_ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                owners += self._db.execute(
                    f"SELECT * FROM owners WHERE memory_id IN ({marks})", chunk
                ).fetchall()
                history += self._db.execute(
                    f"SELECT * FROM history WHERE memory_id IN ({marks})", chunk
                ).fetchall()
        yield
        if not words:
            owners = []
            history = [(*row[:2], None, None, *row[4:]) for row in history]
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO owners VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", owners
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", history
            )

    def reset(self) -> None:
        with self._lock:
            self._db.executescript("DELETE FROM owners; DELETE FROM history; DELETE FROM runs;")

    # --- turn numbers ------------------------------------------------------------------

    def next_turns(self, run: str, count: int) -> int:
        """Reserve ``count`` consecutive turn numbers of ``run``; returns the first."""
        with self._lock:
            row = self._db.execute("SELECT next_turn FROM runs WHERE run = ?", (run,)).fetchone()
            first = int(row[0]) if row else 0
            self._db.execute("INSERT OR REPLACE INTO runs VALUES (?, ?)", (run, first + count))
        return first

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()
