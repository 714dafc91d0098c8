from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.errors import StorageError
from shiyi.memory.jobs import JobQueue


@pytest.fixture
def queue(tmp_path: Path) -> JobQueue:
    return JobQueue(tmp_path / "jobs.sqlite3")


def test_claim_marks_running_and_complete_finishes(queue: JobQueue) -> None:
    first = queue.enqueue("ingest", {"n": 1})
    queue.enqueue("embed", {"n": 2})
    claimed = queue.claim(["ingest"], limit=5)
    assert [(j.id, j.payload) for j in claimed] == [(first, {"n": 1})]
    assert queue.claim(["ingest"]) == []
    queue.complete([first])
    assert queue.pending_count(["ingest"]) == 0
    assert queue.pending_count() == 1


def test_failures_retry_with_delay_then_fail_visibly(queue: JobQueue) -> None:
    queue.enqueue("embed", {}, max_attempts=2)
    job = queue.claim(["embed"])[0]
    assert queue.fail(job, "boom 1", retry_in=0) is True
    again = queue.claim(["embed"])[0]
    assert again.attempts == 1
    assert queue.fail(again, "boom 2", retry_in=0) is False
    assert queue.claim(["embed"]) == []
    failed = queue.failed()
    assert [(f.kind, f.attempts, f.last_error) for f in failed] == [("embed", 2, "boom 2")]
    assert queue.retry_failed() == 1
    assert len(queue.claim(["embed"])) == 1


def test_retry_delay_is_honoured(queue: JobQueue) -> None:
    queue.enqueue("embed", {})
    job = queue.claim(["embed"])[0]
    queue.fail(job, "later", retry_in=3600)
    assert queue.claim(["embed"]) == []


def test_jobs_left_running_by_a_dead_process_are_recovered(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3"
    first = JobQueue(path)
    first.enqueue("ingest", {"x": 1})
    assert first.claim(["ingest"])  # then the process "dies" without completing
    first.close()
    second = JobQueue(path)
    assert second.recover() == 1
    assert [j.payload for j in second.claim(["ingest"])] == [{"x": 1}]


def test_corrupt_queue_file(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sqlite3"
    path.write_bytes(b"garbage" * 1000)
    with pytest.raises(StorageError, match="cannot be opened"):
        JobQueue(path)
