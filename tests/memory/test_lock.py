"""StoreLock against a real second process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.errors import StorageError
from shiyi.memory.lock import LOCK_NAME, StoreLock

HOLDER = """
import sys, time
from pathlib import Path
from shiyi.memory.lock import StoreLock
lock = StoreLock(Path(sys.argv[1]), address="127.0.0.1:8765")
lock.acquire(timeout=5)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def spawn_holder(directory: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory), str(seconds)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "locked"
    return proc


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    proc = spawn_holder(tmp_path, 60)
    yield proc
    proc.kill()
    proc.wait()


def test_second_process_is_named(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    lock = StoreLock(tmp_path)
    info = lock.holder()
    assert info is not None and info["pid"] == holder.pid
    assert info["address"] == "127.0.0.1:8765"
    started = time.monotonic()
    with pytest.raises(StorageError) as caught:
        lock.acquire(timeout=0.3)
    assert time.monotonic() - started >= 0.3
    message = str(caught.value)
    assert f"in use by pid {holder.pid}" in message
    assert str(tmp_path) in message and "since" in message and "-c" in message
    assert "waited 0.3 s: raise memory.lock_timeout" in message  # how to wait longer
    assert not lock.held


def test_waits_for_release(tmp_path: Path) -> None:
    proc = spawn_holder(tmp_path, 0.5)
    try:
        lock = StoreLock(tmp_path)
        lock.acquire(timeout=10)
        assert lock.holder() == {**(lock.holder() or {}), "pid": os.getpid()}
        lock.release()
    finally:
        proc.wait()


def test_dead_holder_is_relocked(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    holder.kill()
    holder.wait()
    stale = json.loads((tmp_path / LOCK_NAME).read_text())
    assert stale["pid"] == holder.pid  # the crashed owner's record is still there
    lock = StoreLock(tmp_path)
    lock.acquire(timeout=0)
    assert lock.holder() is not None and lock.holder()["pid"] == os.getpid()  # type: ignore[index]
    lock.release()
    assert lock.holder() is None
    lock.release()  # idempotent


def test_same_process_reacquire_after_release(tmp_path: Path) -> None:
    with StoreLock(tmp_path) as first:
        assert first.held
        with pytest.raises(StorageError):
            StoreLock(tmp_path).acquire(timeout=0)
    second = StoreLock(tmp_path)
    second.acquire(timeout=0)
    second.release()
