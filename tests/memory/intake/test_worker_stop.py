"""A batch that outlives the worker's stop (an embedding on a loaded machine) finds its store
closed: it gives up quietly, and its jobs run again at the next start (nothing is lost)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from shiyi.errors import StorageError
from shiyi.memory.intake.worker import ENTITIES, MemoryWorker
from shiyi.memory.kuzu.jobs import SqliteJobQueue
from tests.memory.intake.test_worker_priority import wait_for


def test_a_batch_closed_under_gives_up_quietly_and_runs_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "jobs.sqlite3"
    jobs = SqliteJobQueue(path)
    worker = MemoryWorker(store=None, jobs=jobs, embedder=None, idle_poll=0.01)  # type: ignore[arg-type]
    worker.stop_timeout = 0.1
    entered, release = threading.Event(), threading.Event()

    def slow_then_closed(batch: object) -> None:  # fault injection: the store closes meanwhile
        entered.set()
        release.wait(10)
        raise StorageError("the memory graph at graph.kuzu is closed")

    worker._handlers[ENTITIES] = slow_then_closed
    job = jobs.enqueue(ENTITIES, {"ids": []})
    worker.start()
    thread = worker._thread
    assert thread is not None
    wait_for(entered.is_set)
    caplog.set_level(logging.INFO, logger="shiyi.memory.intake.worker")
    worker.stop()  # returns after stop_timeout, the batch still in hand
    assert thread.is_alive()
    jobs.close()  # as Memory.close does next
    release.set()
    thread.join(5)
    assert not thread.is_alive()
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == []
    reopened = SqliteJobQueue(path)
    try:
        assert reopened.recover() == 1  # left running, put back in the queue
        (again,) = reopened.claim([ENTITIES])
        assert (again.id, again.attempts) == (job, 0)
    finally:
        reopened.close()
