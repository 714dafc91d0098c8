"""``server.json`` names a live shiyi owner or nothing: real processes, real /proc."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.client import owner as owner_module
from shiyi.client.owner import check_owner, live_owner, read_owner, remove_owner, write_owner
from shiyi.client.procinfo import process_command, process_start_time


def record(
    data_dir: Path, pid: int, *, started_at: float, address: str = "http://127.0.0.1:1"
) -> Path:
    """A record as another process (or an earlier boot) would have left it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "server.json"
    body = {"pid": pid, "address": address, "started_at": started_at, "command": "shiyi serve"}
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "60"])
    # Until the child has exec'd, /proc shows the parent's (pytest's) command line.
    deadline = time.monotonic() + 10
    while process_command(proc.pid) != "sleep 60" and time.monotonic() < deadline:
        time.sleep(0.01)
    yield proc
    proc.kill()
    proc.wait(timeout=10)


def python_sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_record_naming_this_process_that_it_did_not_write_is_stale(tmp_path: Path) -> None:
    # A restarted container hands the new server the old server's pid.
    path = record(tmp_path, os.getpid(), started_at=time.time())
    check = check_owner(tmp_path)
    assert check.owner is None
    assert check.stale is not None and "this very process" in check.reason
    assert not path.exists()


def test_a_record_this_process_wrote_stays_its_own(tmp_path: Path) -> None:
    written = write_owner(tmp_path, "http://127.0.0.1:1")
    try:
        assert live_owner(tmp_path) == written
    finally:
        remove_owner(tmp_path)
    assert read_owner(tmp_path) is None


def test_a_live_unrelated_process_is_not_the_owner(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    path = record(tmp_path, sleeper.pid, started_at=time.time())
    check = check_owner(tmp_path)
    assert check.owner is None
    assert f"pid {sleeper.pid} runs `sleep 60`, not shiyi" == check.reason
    assert not path.exists()


def test_a_process_started_after_the_record_reuses_the_pid(tmp_path: Path) -> None:
    proc = python_sleeper()  # Python: only its start time gives it away
    try:
        path = record(tmp_path, proc.pid, started_at=time.time() - 3600)
        check = check_owner(tmp_path)
        assert check.owner is None
        assert "after the record was written" in check.reason
        assert not path.exists()
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_an_owner_that_never_answers_is_stale_after_its_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = python_sleeper()
    try:
        path = record(tmp_path, proc.pid, started_at=time.time())
        assert live_owner(tmp_path) is not None  # just started: it may not listen yet
        monkeypatch.setattr(owner_module, "START_GRACE_SECONDS", 0.0)
        check = check_owner(tmp_path)
        assert check.owner is None
        assert check.reason == f"pid {proc.pid} does not answer at http://127.0.0.1:1/healthz"
        assert not path.exists()
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_proc_reads_this_process() -> None:
    started = process_start_time(os.getpid())
    assert started is not None and started <= time.time()
    command = process_command(os.getpid())
    assert command is not None and "python" in command.lower()


def test_a_busy_owner_that_accepts_but_answers_slowly_stays_the_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # accepts, never replies
    proc = python_sleeper()
    try:
        port = listener.getsockname()[1]
        record(tmp_path, proc.pid, started_at=time.time(), address=f"http://127.0.0.1:{port}")
        monkeypatch.setattr(owner_module, "START_GRACE_SECONDS", 0.0)
        monkeypatch.setattr(owner_module, "PROBE_SECONDS", 0.3)
        owner = live_owner(tmp_path)
        assert owner is not None and owner.pid == proc.pid
    finally:
        listener.close()
        proc.kill()
        proc.wait(timeout=10)
