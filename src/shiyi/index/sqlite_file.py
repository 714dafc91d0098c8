"""Per-thread SQLite connections to one file, shared by the indexes kept in it."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shiyi.errors import StorageError

log = logging.getLogger(__name__)
_SIDE_FILES = ("-wal", "-shm", "-journal")


class SqliteFile:
    """One SQLite file used from many threads.

    Each thread gets its own connection (SQLite connections must not be used concurrently);
    WAL lets readers run while one writer commits, and a lock serialises our own writers so
    they queue in Python instead of spinning on ``SQLITE_BUSY``.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._all_lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        with self.errors("open the database"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn()

    def conn(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        if self._closed:
            raise StorageError(f"{self.path} is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
        return conn

    def _open(self) -> sqlite3.Connection:
        # check_same_thread=False only so close() may close every thread's connection.
        conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        with self._all_lock:
            self._connections.append(conn)
        return conn

    @contextmanager
    def errors(self, action: str) -> Iterator[None]:
        """sqlite3 errors inside become a :class:`StorageError` saying what failed and why."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StorageError(
                f"could not {action} in {self.path}: {exc}; "
                "check the file is not corrupt or locked by another process"
            ) from exc

    @contextmanager
    def write(self, action: str) -> Iterator[sqlite3.Connection]:
        """One transaction, our writers taking turns; committed on success."""
        with self.errors(action), self._write_lock:
            conn = self.conn()
            with conn:
                yield conn

    def flag(self, table: str, key: str) -> bool:
        """Whether ``key`` is set in ``table`` (``key TEXT PRIMARY KEY, value TEXT``): a
        once-only step, such as a mirror's backfill, that has completed."""
        with self.errors(f"read {key!r} from {table}"):
            query = f"SELECT 1 FROM {table} WHERE key = ?"
            return self.conn().execute(query, (key,)).fetchone() is not None

    def set_flag(self, table: str, key: str) -> None:
        with self.write(f"record {key!r} in {table}") as conn:
            conn.execute(f"INSERT OR REPLACE INTO {table}(key, value) VALUES (?, '1')", (key,))

    def close(self) -> None:
        """Close every thread's connection; later calls raise :class:`StorageError`."""
        self._closed = True
        with self._all_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()


def move_aside(path: Path, reason: str) -> Path:
    """Rename a damaged *cache* file (and its WAL/SHM) to ``<name>.corrupt-<time>`` and warn.

    Only for files that hold nothing but recomputable data: the caller then opens a fresh
    one in its place.  The damaged bytes are kept, never deleted, for a post-mortem.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    os.replace(path, target)
    for suffix in _SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, target.with_name(target.name + suffix))
    log.warning(
        "%s was unreadable (%s); it only caches recomputable data, so it was moved aside to %s "
        "and a fresh one is used (delete the moved file once you no longer need it)",
        path,
        reason,
        target,
    )
    return target
