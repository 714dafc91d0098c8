"""The memory worker yields the CPU to the thread that serves replies."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from shiyi.memory.intake.worker import MemoryWorker
from shiyi.memory.kuzu.jobs import SqliteJobQueue


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_worker_thread_runs_at_a_lower_priority(tmp_path: Path) -> None:
    jobs = SqliteJobQueue(tmp_path / "jobs.sqlite3")
    worker = MemoryWorker(store=None, jobs=jobs, embedder=None, idle_poll=0.05)  # type: ignore[arg-type]
    base = os.getpriority(os.PRIO_PROCESS, 0)
    worker.start()
    try:
        thread = worker._thread
        assert thread is not None and thread.native_id is not None
        deadline = time.monotonic() + 5
        while os.getpriority(os.PRIO_PROCESS, thread.native_id) == base:
            assert time.monotonic() < deadline, "the worker never lowered its priority"
            time.sleep(0.01)
        assert os.getpriority(os.PRIO_PROCESS, thread.native_id) == min(19, base + 10)
        assert os.getpriority(os.PRIO_PROCESS, 0) == base  # the calling thread is untouched
    finally:
        worker.stop()
        jobs.close()


def test_worker_waits_while_a_server_owes_first_events(tmp_path: Path) -> None:
    from shiyi.memory.intake.worker import ENTITIES

    jobs = SqliteJobQueue(tmp_path / "jobs.sqlite3")
    worker = MemoryWorker(store=None, jobs=jobs, embedder=None, idle_poll=0.01)  # type: ignore[arg-type]
    handled: list[int] = []
    worker._handlers[ENTITIES] = lambda batch: handled.extend(j.id for j in batch)
    busy = True
    worker.defer_while = lambda: busy
    worker.start()
    try:
        job = jobs.enqueue(ENTITIES, {"ids": []})
        worker.wake()
        time.sleep(0.2)  # well inside the 0.5 s the worker may wait
        assert handled == []
        busy = False
        deadline = time.monotonic() + 10
        while not handled and time.monotonic() < deadline:
            time.sleep(0.01)
        assert handled == [job]
    finally:
        worker.stop()
        jobs.close()


def test_heavy_work_waits_while_a_reply_is_computed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cheap kinds keep the keyword index current; model work waits, but not forever."""
    from shiyi.memory.intake import worker as worker_module
    from shiyi.memory.intake.worker import ENTITIES

    jobs = SqliteJobQueue(tmp_path / "jobs.sqlite3")
    worker = MemoryWorker(store=None, jobs=jobs, embedder=None, idle_poll=0.01)  # type: ignore[arg-type]
    light: list[int] = []
    heavy: list[int] = []
    worker._handlers[ENTITIES] = lambda batch: light.extend(j.id for j in batch)
    worker.register("extract", lambda batch: heavy.extend(j.id for j in batch))
    replying = True
    worker.hold_heavy_while = lambda: replying
    worker.start()
    try:
        cheap, costly = jobs.enqueue(ENTITIES, {"ids": []}), jobs.enqueue("extract", {})
        worker.wake()
        wait_for(lambda: light == [cheap])
        time.sleep(0.3)
        assert heavy == []  # held while the reply is computed
        replying = False
        wait_for(lambda: heavy == [costly])
        # Held for good, it still runs after MAX_HOLD.
        monkeypatch.setattr(worker_module, "MAX_HOLD", 0.2)
        replying = True
        late = jobs.enqueue("extract", {})
        worker.wake()
        wait_for(lambda: heavy == [costly, late])
    finally:
        worker.stop()
        jobs.close()


def wait_for(condition: Callable[[], bool], limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "the worker never got there"
        time.sleep(0.01)
