"""The memory worker yields the CPU to the thread that serves replies."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from shiyi.memory.kuzu.jobs import SqliteJobQueue
from shiyi.memory.worker import MemoryWorker


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
    from shiyi.memory.worker import ENTITIES

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
