"""Per-thread SQLite connections to one file, shared by the indexes kept in it."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from shiyi.errors import StorageError

log = logging.getLogger(__name__)
_SIDE_FILES = ("-wal", "-shm", "-journal")
_MAGIC = b"SQLite format 3\x00"
EMPTY = "it is empty (0 bytes)"
""":func:`file_damage`'s verdict on a 0-byte file: damage only where the file must hold
something (a new file is 0 bytes until its first commit)."""


def file_damage(path: Path) -> str | None:
    """What is wrong with an SQLite file, judged from its size and header without opening
    it (so cheap enough for every open), or None when nothing is visibly wrong.

    SQLite itself takes a 0-byte file for an empty database, and a truncated one for a
    sound one until a read reaches the missing pages: either way a store would look
    empty or partial instead of damaged.  A WAL beside the file may hold pages not yet
    copied into it, so with a non-empty WAL only the header's magic is checked."""
    try:
        size = path.stat().st_size
        with path.open("rb") as raw:
            header = raw.read(100)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"it cannot be read: {exc}"
    wal = path.with_name(path.name + "-wal")
    pending = wal.exists() and wal.stat().st_size > 0
    if size == 0:
        return None if pending else EMPTY
    if not header.startswith(_MAGIC):
        return "it does not start with an SQLite header (overwritten or not an SQLite file)"
    if len(header) < 100:
        return f"it is truncated: {size} bytes, less than an SQLite header"
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        return f"its header is garbled (page size {page_size})"
    pages = int.from_bytes(header[28:32], "big")
    header_valid = header[24:28] == header[92:96]
    if not pending and header_valid and pages and size < pages * page_size:
        return f"it is truncated: {size:,} bytes of the {pages * page_size:,} its header records"
    if not pending and size % page_size:
        return f"it is truncated: {size:,} bytes, not a whole number of {page_size}-byte pages"
    return None


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


# --- clean-close stamps ---------------------------------------------------------------------
# A store file exactly as its last clean close left it needs no integrity check when it is
# opened again; one changed since (a crash, a copy, another program) does.  The stamp
# records size, modification time and inode right after the close.


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".closed")


def _identity(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "inode": stat.st_ino}


def stamp_clean_close(path: Path) -> None:
    with suppress(OSError):  # no stamp only means the next open checks the file
        _stamp(path).write_text(json.dumps(_identity(path)), encoding="utf-8")


def drop_clean_close(path: Path) -> None:
    """The file is open for writing: until it closes cleanly, a next open checks it."""
    with suppress(OSError):
        _stamp(path).unlink(missing_ok=True)


def closed_cleanly(path: Path, wal_name: str | None = None) -> bool:
    """The file is as its last clean close left it, with no WAL still to apply."""
    wal = path.with_name(wal_name or path.name + "-wal")
    try:
        stamp = json.loads(_stamp(path).read_text(encoding="utf-8"))
        if wal.exists() and wal.stat().st_size > 0:
            return False
        return bool(stamp == _identity(path))
    except (OSError, ValueError):
        return False


def quick_check(path: Path) -> list[str]:
    """SQLite's ``PRAGMA quick_check`` rows for ``path`` (``["ok"]`` when sound), read-only;
    raises :class:`sqlite3.Error` when the file cannot be read at all."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
    try:
        return [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
    finally:
        conn.close()


def integrity_damage(path: Path) -> str | None:
    """SQLite's ``quick_check`` verdict (None when "ok"), for a file not closed cleanly:
    pages garbled inside a file with a sound header are otherwise only found when a read
    happens to reach them.  Cost: one pass over the file."""
    if not path.exists() or closed_cleanly(path):
        return None
    try:
        verdict = quick_check(path)
    except sqlite3.OperationalError:
        return None  # locked or busy: not a verdict on the file
    except sqlite3.Error as exc:
        verdict = [str(exc)]
    return None if verdict == ["ok"] else "; ".join(verdict[:3])
