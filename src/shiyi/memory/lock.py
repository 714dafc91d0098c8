"""One owner process per memory store: an advisory ``flock`` on ``<dir>/owner.lock``.

Kuzu itself refuses a second process outright (``IO exception: Could not set lock on file``,
for read-write and ``read_only=True`` alike), which is neither waitable nor explanatory.  This
lock comes first, waits a little, and names the holder.  ``flock`` is released by the kernel
when the holding process dies, so a crash never leaves the store stuck; the stale JSON left in
the file is simply overwritten by the next owner.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from shiyi.errors import StorageError

LOCK_NAME = "owner.lock"
_POLL_SECONDS = 0.05


class StoreLock:
    """An exclusive lock on a store directory, held for the life of the owning process."""

    def __init__(self, directory: Path, *, address: str | None = None) -> None:
        self.directory = directory
        self.path = directory / LOCK_NAME
        self.address = address
        self._file: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._file is not None

    def acquire(self, timeout: float = 0.0) -> None:
        """Take the lock, waiting up to ``timeout`` seconds; StorageError names the holder."""
        if self._file is not None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        # "a" never truncates: the holder's record stays readable until we own the lock.
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - kept open on purpose
        deadline = time.monotonic() + max(timeout, 0.0)
        while not _try_flock(handle):
            if time.monotonic() >= deadline:
                handle.close()
                raise StorageError(self._busy_message(timeout))
            time.sleep(_POLL_SECONDS)
        self._file = handle
        self._write_owner(handle)

    def _write_owner(self, handle: IO[str]) -> None:
        record = {
            "pid": os.getpid(),
            "command": " ".join(sys.argv) or sys.executable,
            "started_at": time.time(),
            "address": self.address,
        }
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(record))
        handle.flush()
        os.fsync(handle.fileno())

    def holder(self) -> dict[str, Any] | None:
        """The recorded owner, read without locking (may be a dead process's stale record)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def release(self) -> None:
        """Idempotent.  The record is cleared first so ``holder()`` stops naming us."""
        handle, self._file = self._file, None
        if handle is None:
            return
        try:
            handle.seek(0)
            handle.truncate()
            handle.flush()
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()

    def _busy_message(self, waited: float = 0.0) -> str:
        info = self.holder() or {}
        pid = info.get("pid", "unknown")
        command = info.get("command") or "unknown command"
        since = _clock(info.get("started_at"))
        where = f", serving {info['address']}" if info.get("address") else ""
        return (
            f"the memory store at {self.directory} is in use by pid {pid} "
            f"(`{command}`, since {since}{where}); close that process or use it instead "
            "of opening the store a second time"
            + (
                f" (waited {waited:g} s: raise memory.lock_timeout to wait longer)"
                if waited
                else ""
            )
        )

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _try_flock(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _clock(started_at: Any) -> str:
    if not isinstance(started_at, int | float):
        return "an unknown time"
    return datetime.fromtimestamp(started_at).strftime("%H:%M")
